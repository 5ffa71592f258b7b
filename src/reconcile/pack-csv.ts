/**
 * Turns PostgreSQL's own CSV (`COPY … TO STDOUT WITH (FORMAT csv)`) into the pack's CSV, byte for byte
 * what csv-stringify wrote from the same cells before (the pack's bytes must not change across versions of
 * paysync: an unchanged day keeps its version). PostgreSQL already quotes exactly as csv-stringify does (a
 * field is quoted when it holds a comma, a quote, CR or LF; quotes are doubled; NULL is the empty field),
 * so only two things differ, and this fixes both while the bytes stream past:
 * - record ends: PostgreSQL ends records with LF, RFC 4180 (and the pack) with CRLF. An LF inside a
 *   quoted field is data and stays as it is.
 * - the jsonb column: PostgreSQL prints `{"a": 1, "b": [1, 2]}`, a space after every `:` and `,` outside
 *   strings and nowhere else; the pack keeps the service's compact form. Spaces outside JSON strings are
 *   dropped, which keeps every number's exact text.
 * Works on bytes: every byte it looks at is ASCII, and UTF-8 never uses ASCII bytes inside a multi-byte
 * character, so a chunk may end anywhere.
 */
import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

const QUOTE = 0x22;
const COMMA = 0x2c;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const BACKSLASH = 0x5c;

export class PackCsvTranscoder {
  /** Records ended so far (a header line counts as one). */
  records = 0;
  private quoted = false;
  /** A quote was read inside a quoted field: the next byte tells a doubled quote from the closing one. */
  private quotePending = false;
  private field = 0;
  private jsonString = false;
  private jsonEscape = false;

  /** `jsonColumn`: index of the field holding jsonb text to compact, or -1. */
  constructor(private readonly jsonColumn: number) {}

  transcode(input: Uint8Array): Buffer {
    const out = Buffer.allocUnsafe(input.length * 2 + 1);
    const json = this.jsonColumn;
    let { quoted, quotePending, field, jsonString, jsonEscape, records } = this;
    let o = 0;
    for (let i = 0; i < input.length; i++) {
      const b = input[i] as number;
      let content = b;
      if (quotePending) {
        quotePending = false;
        if (b === QUOTE) {
          // a doubled quote: one quote character of the field's content, written doubled again
          out[o++] = QUOTE;
          content = QUOTE;
        } else {
          out[o++] = QUOTE; // the field's closing quote; `b` follows it outside the quotes
          quoted = false;
        }
      } else if (quoted) {
        if (b === QUOTE) {
          quotePending = true;
          continue;
        }
      } else if (b === QUOTE) {
        quoted = true;
        out[o++] = b;
        continue;
      }
      if (!quoted) {
        if (b === COMMA) {
          field++;
          jsonString = jsonEscape = false;
          out[o++] = b;
          continue;
        }
        if (b === LF) {
          out[o++] = CR;
          out[o++] = LF;
          field = 0;
          records++;
          jsonString = jsonEscape = false;
          continue;
        }
      }
      if (field === json) {
        if (jsonEscape) jsonEscape = false;
        else if (jsonString) {
          if (content === BACKSLASH) jsonEscape = true;
          else if (content === QUOTE) jsonString = false;
        } else if (content === QUOTE) jsonString = true;
        else if (content === SPACE) continue;
      }
      out[o++] = b;
    }
    Object.assign(this, { quoted, quotePending, field, jsonString, jsonEscape, records });
    return out.subarray(0, o);
  }

  /** What is still held back at the end of the input (a closing quote). */
  finish(): Buffer {
    if (!this.quotePending) return Buffer.alloc(0);
    this.quotePending = false;
    this.quoted = false;
    return Buffer.from([QUOTE]);
  }
}

/** The transcoder as a stream stage that also hashes (SHA-256) and counts what it writes. */
export class PackCsvStream extends Transform {
  readonly hash = createHash('sha256');
  bytes = 0;
  private readonly transcoder: PackCsvTranscoder;

  constructor(jsonColumn: number) {
    super();
    this.transcoder = new PackCsvTranscoder(jsonColumn);
  }

  /** Records written, the header line included. */
  get records(): number {
    return this.transcoder.records;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.emit_(this.transcoder.transcode(chunk));
    done();
  }

  override _flush(done: TransformCallback): void {
    this.emit_(this.transcoder.finish());
    done();
  }

  private emit_(buffer: Buffer): void {
    if (buffer.length === 0) return;
    this.hash.update(buffer);
    this.bytes += buffer.length;
    this.push(buffer);
  }
}
