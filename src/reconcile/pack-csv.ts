/**
 * Turns PostgreSQL's own CSV (`COPY … TO STDOUT WITH (FORMAT csv)`) into the pack's CSV, byte for byte
 * what the earlier writer (cells neutralised and compacted in JavaScript, then csv-stringify) made of the
 * same cells: an unchanged day must keep its bytes across versions of paysync. PostgreSQL already quotes
 * as RFC 4180 asks (a field holding a comma, a quote, CR or LF is quoted; quotes are doubled; NULL is the
 * empty field), so three things are left, done while the bytes stream past:
 * - record ends: PostgreSQL ends records with LF, RFC 4180 (and the pack) with CRLF. An LF inside a
 *   quoted field is data and stays as it is.
 * - free text is neutralised against formula injection (csv-cells.ts): a `'` goes before a field whose
 *   first character after any spaces is in FORMULA_FIRST_CHARACTERS, unless the whole field is a phone
 *   number. Done here rather
 *   than in SQL because this runs on the other core while PostgreSQL writes (in SQL it cost 0.18 s of a
 *   200k-payment export).
 * - the jsonb column: PostgreSQL prints `{"a": 1, "b": [1, 2]}`, a space after every `:` and `,` outside
 *   strings and nowhere else; the pack keeps the service's compact form. Spaces outside JSON strings are
 *   dropped, which keeps every number's exact text.
 * The SQL must send '' as NULL for free-text columns (COPY would quote an empty string; the pack writes
 * the empty field for both). Works on bytes: every byte it looks at is ASCII, and UTF-8 never uses ASCII
 * bytes inside a multi-byte character, so a chunk may end anywhere.
 */
import { createHash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { FORMULA_FIRST_CHARACTERS, PHONE_DIGITS } from './csv-cells.js';

const QUOTE = 0x22;
const COMMA = 0x2c;
const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const BACKSLASH = 0x5c;
const APOSTROPHE = 0x27;
const PLUS = 0x2b;
const ZERO = 0x30;
const NINE = 0x39;

const FORMULA_FIRST = new Uint8Array(128);
for (const c of FORMULA_FIRST_CHARACTERS) FORMULA_FIRST[c.charCodeAt(0)] = 1;

export interface PackCsvColumns {
  /** Indexes of the free-text fields to neutralise. */
  freeText: readonly number[];
  /** Index of the field holding jsonb text to compact, or -1. */
  json: number;
}

/**
 * Whether the spaces starting at `start` are followed by a formula's first character (null when the
 * input ends before that is known and `final` is false).
 */
function formulaAfterSpaces(input: Uint8Array, start: number, final: boolean): boolean | null {
  for (let j = start + 1; ; j++) {
    if (j >= input.length) return final ? false : null;
    const c = input[j] as number;
    if (c !== SPACE) return c < 128 && FORMULA_FIRST[c] === 1;
  }
}

/**
 * Whether the unquoted field starting with `+` at `start` is a phone number (`+` and 6–15 digits up to
 * the field's end); null when the input ends before that is known and `final` is false.
 */
function phoneAt(input: Uint8Array, start: number, final: boolean): boolean | null {
  let digits = 0;
  for (let j = start + 1; ; j++) {
    if (j >= input.length) return final ? digits >= PHONE_DIGITS.min : null;
    const c = input[j] as number;
    if (c >= ZERO && c <= NINE) {
      if (++digits > PHONE_DIGITS.max) return false;
    } else return (c === COMMA || c === LF) && digits >= PHONE_DIGITS.min;
  }
}

export class PackCsvTranscoder {
  /** Records ended so far (a header line counts as one). */
  records = 0;
  private readonly freeText: Uint8Array;
  private readonly json: number;
  private quoted = false;
  /** A quote was read inside a quoted field: the next byte tells a doubled quote from the closing one. */
  private quotePending = false;
  private field = 0;
  /** No content byte of the current field read yet. */
  private fieldStart = true;
  private jsonString = false;
  private jsonEscape = false;
  /** The start of an unquoted `+` field held back until its end shows whether it is a phone number. */
  private held: Uint8Array | null = null;

  constructor(columns: PackCsvColumns) {
    this.freeText = new Uint8Array(Math.max(0, ...columns.freeText) + 1);
    for (const i of columns.freeText) this.freeText[i] = 1;
    this.json = columns.json;
  }

  transcode(chunk: Uint8Array, final = false): Buffer {
    const input = this.held ? Buffer.concat([this.held, chunk]) : chunk;
    this.held = null;
    const out = Buffer.allocUnsafe(input.length * 2 + 1);
    const { json, freeText } = this;
    let { quoted, quotePending, field, fieldStart, jsonString, jsonEscape, records } = this;
    let o = 0;
    const end = input.length;
    for (let i = 0; i < end; i++) {
      if (!fieldStart && !quotePending && field !== json) {
        // past a field's first byte, outside the jsonb column, bytes other than those ending the field
        // (a quote inside quotes; a comma, LF or quote outside) are copied as they are: most of the input
        if (quoted) while (i < end && input[i] !== QUOTE) out[o++] = input[i++] as number;
        else {
          for (; i < end; i++) {
            const c = input[i] as number;
            if (c === COMMA || c === LF || c === QUOTE) break;
            out[o++] = c;
          }
        }
        if (i === end) break;
      }
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
        if (b === COMMA || b === LF) {
          if (b === LF) {
            out[o++] = CR;
            field = 0;
            records++;
          } else field++;
          out[o++] = b;
          fieldStart = true;
          jsonString = jsonEscape = false;
          continue;
        }
      }
      if (fieldStart) {
        fieldStart = false;
        if (content === SPACE && freeText[field] === 1) {
          // spaces then a formula (" =1+1"): a spreadsheet that trims would run it
          const formula = formulaAfterSpaces(input, i, final);
          if (formula === null) {
            this.held = Uint8Array.prototype.slice.call(input, i);
            fieldStart = true;
            break;
          }
          if (formula) out[o++] = APOSTROPHE;
        } else if (content < 128 && FORMULA_FIRST[content] === 1 && freeText[field] === 1) {
          // a quoted field is never a phone number: PostgreSQL quotes only fields with special characters
          const phone = content === PLUS && !quoted ? phoneAt(input, i, final) : false;
          if (phone === null) {
            this.held = Uint8Array.prototype.slice.call(input, i);
            fieldStart = true;
            break;
          }
          if (!phone) out[o++] = APOSTROPHE;
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
    Object.assign(this, { quoted, quotePending, field, fieldStart, jsonString, jsonEscape, records });
    return out.subarray(0, o);
  }

  /** What is still held back at the end of the input. */
  finish(): Buffer {
    const rest = this.held ? this.transcode(new Uint8Array(0), true) : Buffer.alloc(0);
    if (!this.quotePending) return rest;
    this.quotePending = false;
    this.quoted = false;
    return Buffer.concat([rest, Buffer.from([QUOTE])]);
  }
}

/** The transcoder as a stream stage that also hashes (SHA-256) and counts what it writes. */
export class PackCsvStream extends Transform {
  readonly hash = createHash('sha256');
  bytes = 0;
  private readonly transcoder: PackCsvTranscoder;

  constructor(columns: PackCsvColumns) {
    super();
    this.transcoder = new PackCsvTranscoder(columns);
  }

  /** Records written, the header line included. */
  get records(): number {
    return this.transcoder.records;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.pushCounted(this.transcoder.transcode(chunk));
    done();
  }

  override _flush(done: TransformCallback): void {
    this.pushCounted(this.transcoder.finish());
    done();
  }

  private pushCounted(buffer: Buffer): void {
    if (buffer.length === 0) return;
    this.hash.update(buffer);
    this.bytes += buffer.length;
    this.push(buffer);
  }
}
