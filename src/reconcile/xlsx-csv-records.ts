/**
 * The records of a records file's CSV as PostgreSQL's COPY writes it, found in its bytes as the chunks
 * arrive, for the records sheets (xlsx-record-rows.ts): fields separated by commas, records ended by LF,
 * a field holding a comma, quote, CR or LF quoted with its quotes doubled, NULL and '' both empty.
 *
 * Contract: the header line is skipped; every other record is handed over whole, in order, as the bytes
 * it lies in and the bounds of each of its fields (`starts`, `ends`, `quoted`: valid during the call
 * only). A record cut by a chunk's end waits for the next chunk; at the input's end, a last record
 * without its LF is whole. A record whose field count is not the expected one, or a CSV ending inside a
 * quoted field, throws: the bytes are not the COPY they were said to be.
 */

const QUOTE = 0x22;
const COMMA = 0x2c;
const LF = 0x0a;

/** Told each data record: the bytes holding it, and its length in bytes (LF included). */
export type RecordHandler = (input: Buffer, recordBytes: number) => void;

export class CsvRecords {
  /** Where each field's content starts and ends in `input` (inside the quotes of a quoted field). */
  readonly starts: Int32Array;
  readonly ends: Int32Array;
  /** 1 for a quoted field (its doubled quotes are one quote each). */
  readonly quoted: Uint8Array;
  private held: Buffer | null = null;
  private headerSkipped = false;

  constructor(
    private readonly fields: number,
    private readonly onRecord: RecordHandler,
  ) {
    this.starts = new Int32Array(fields);
    this.ends = new Int32Array(fields);
    this.quoted = new Uint8Array(fields);
  }

  /** Hands over the records `chunk` completes (with what an earlier chunk left unfinished). */
  feed(chunk: Buffer): void {
    const input = this.held ? Buffer.concat([this.held, chunk]) : chunk;
    const used = this.records(input, false);
    this.held = used < input.length ? Buffer.from(input.subarray(used)) : null;
  }

  /** Hands over what is left at the end of the input. */
  end(): void {
    if (!this.held) return;
    const input = this.held;
    this.held = null;
    if (this.records(input, true) < input.length) throw new Error('pack.xlsx: the CSV ended inside a record');
  }

  /** Reads whole records from `input`; returns where the first unfinished one starts. */
  private records(input: Buffer, final: boolean): number {
    const fields = this.fields;
    let pos = 0;
    while (pos < input.length) {
      let i = pos;
      let f = 0;
      let complete = false;
      for (;;) {
        if (f >= fields) throw new Error(`pack.xlsx: a CSV record with more than ${fields} fields`);
        if (input[i] === QUOTE) {
          let j = i + 1;
          for (;;) {
            j = input.indexOf(QUOTE, j);
            if (j < 0 || (j + 1 >= input.length && !final)) break;
            if (input[j + 1] === QUOTE) j += 2;
            else break;
          }
          if (j < 0 || (j + 1 >= input.length && !final)) break;
          this.quoted[f] = 1;
          this.starts[f] = i + 1;
          this.ends[f] = j;
          i = j + 1;
        } else {
          let j = i;
          while (j < input.length && input[j] !== COMMA && input[j] !== LF) j++;
          this.quoted[f] = 0;
          this.starts[f] = i;
          this.ends[f] = j;
          i = j;
        }
        f++;
        if (i >= input.length) {
          complete = final;
          break;
        }
        if (input[i] === COMMA) i++;
        else {
          i++; // LF: the record's end
          complete = true;
          break;
        }
      }
      if (!complete) break;
      if (f !== fields)
        throw new Error(`pack.xlsx: a CSV record with ${f} fields where ${fields} were expected`);
      if (this.headerSkipped) this.onRecord(input, i - pos);
      else this.headerSkipped = true;
      pos = i;
    }
    return pos;
  }
}
