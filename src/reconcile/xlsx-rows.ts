/**
 * The records sheets' rows, made from the very bytes of PostgreSQL's CSV of the day's records (the COPY
 * that writes payments.csv and transfers.csv): one read of the warehouse serves both files, and the
 * rows are built as bytes, without a JavaScript string or object per cell. The cell rules are those of
 * xlsx-cells.ts, applied to bytes:
 * - text: an inline string; `&`, `<`, `>` escaped; CR as `_x000D_`; an underscore starting `_xHHHH_` as
 *   `_x005F_`; other control characters and U+FFFE/U+FFFF visible (`\u0001`) and the cell flagged; a text
 *   longer than 32,767 characters (UTF-16 units, as Excel counts) cut before a whole character, ended
 *   with `…` and flagged; `xml:space="preserve"` when it starts or ends with whitespace.
 * - json: the same, with the spaces PostgreSQL prints outside strings dropped (the service's compact form).
 * - amount: in a `number` column, a number whose format is the amount's own scale; in a `text` column,
 *   the exact decimal with thousands separators; an amount that fits neither (NaN) is flagged text.
 * - time: two cells, the wall clock in REPORT_TIMEZONE as a date serial (offset from the zone's rules at
 *   that instant) and the exact UTC ISO text.
 * PostgreSQL's CSV: fields separated by commas, records ended by LF, a field with a comma, quote, CR or
 * LF quoted with quotes doubled, NULL and '' empty. A record cut by a chunk's end waits for the next chunk.
 */
import {
  dateSerialParts,
  MAX_CELL_TEXT,
  MAX_SCALE,
  MAX_SIGNIFICANT_DIGITS,
  type AmountLook,
  type FlagReason,
} from './xlsx-cells.js';
import { AMOUNT_BASE, STYLE } from './xlsx-styles.js';
import { columnLetters } from './xlsx-sheet.js';

export type RecordColumnKind = 'text' | 'json' | 'amount' | 'time';

export interface RowsOptions {
  /** The kind of each CSV field, in order. */
  kinds: readonly RecordColumnKind[];
  look: AmountLook;
  /** The zone's offset from UTC, in minutes, at an instant. */
  offsetMinutes: (epochMs: number) => number;
  /** Rows a sheet holds, its header row included. */
  maxRows: number;
}

/** Between two pieces of rows: the sheet is full, the next rows start a new one. */
export const SHEET_BREAK = Symbol('sheet break');
export type RowsPiece = Buffer | typeof SHEET_BREAK;

const QUOTE = 0x22;
const COMMA = 0x2c;
const LF = 0x0a;
const CR = 0x0d;
const OUT_SIZE = 1 << 18;
/** Below this many bytes a field cannot reach MAX_CELL_TEXT units, even if every byte became `\uXXXX`. */
const SHORT_FIELD = Math.floor((MAX_CELL_TEXT - 1) / 6);

const ascii = (s: string) => Buffer.from(s, 'latin1');
const CELL_OPEN = ascii('<c r="');
const STYLE_ATTR = ascii('" s="');
/** After `<c r="X9` (unstyled text) or `<c r="X9" s="N`. */
const INLINE_OPEN = ascii('" t="inlineStr"><is><t>');
const INLINE_OPEN_PRESERVE = ascii('" t="inlineStr"><is><t xml:space="preserve">');
const INLINE_CLOSE = ascii('</t></is></c>');
const VALUE_OPEN = ascii('"><v>');
const VALUE_CLOSE = ascii('</v></c>');
const ROW_OPEN = ascii('<row r="');
const ROW_OPEN_END = ascii('">');
const ROW_CLOSE = ascii('</row>');
const AMP = ascii('&amp;');
const LT = ascii('&lt;');
const GT = ascii('&gt;');
const CR_ESCAPE = ascii('_x000D_');
const UNDERSCORE_ESCAPE = ascii('_x005F_');
const ELLIPSIS = Buffer.from('…', 'utf8');
const STYLE_DIGITS = [...Array(128).keys()].map((n) => ascii(String(n)));

/** Bytes the text loop must look at (everything else is copied in runs). */
const SPECIAL = new Uint8Array(256);
for (let b = 0; b < 0x20; b++) if (b !== 0x09 && b !== LF) SPECIAL[b] = 1;
for (const b of [QUOTE, 0x26, 0x3c, 0x3e, 0x5f, 0x7f, 0xef]) SPECIAL[b] = 1;
const JSON_SPECIAL = Uint8Array.from(SPECIAL);
JSON_SPECIAL[0x20] = 1;
JSON_SPECIAL[0x5c] = 1;

const isHex = (b: number) => (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
const isSpace = (b: number | undefined) => b === 0x20 || b === 0x09 || b === LF || b === CR;
const digit = (input: Buffer, i: number) => (input[i] as number) - 0x30;
const num = (input: Buffer, from: number, length: number) => {
  let n = 0;
  for (let i = from; i < from + length; i++) {
    const d = digit(input, i);
    if (d < 0 || d > 9) return NaN;
    n = n * 10 + d;
  }
  return n;
};

const KIND = { text: 0, json: 1, amount: 2, time: 3 } as const;

export class RecordRowsTranscoder {
  /** Records written as rows. */
  rows = 0;
  readonly flags: Partial<Record<FlagReason, number>> = {};
  /** Rows of the current sheet, its header included (the caller wrote the header). */
  private sheetRows = 1;
  private held: Buffer | null = null;
  private headerSkipped = false;
  /** Rows are written at `o`; `pieceStart` is where the bytes not yet handed out begin. */
  private out = Buffer.allocUnsafe(OUT_SIZE);
  private o = 0;
  private pieceStart = 0;
  private pieces: RowsPiece[] = [];
  private readonly kinds: Uint8Array;
  private readonly cellRefs: Buffer[];
  private readonly starts: Int32Array;
  private readonly ends: Int32Array;
  private readonly quoted: Uint8Array;
  /** The current row's number as ASCII digits (incremented in place). */
  private readonly rowDigits = Buffer.from('2000000000', 'latin1');
  private rowDigitsLength = 1;
  private readonly offsets = new Map<number, number>();
  private lastHour = NaN;
  private lastOffset = 0;
  private lastDateKey = -1;
  private lastDateMs = 0;
  private lastSerialDays = -1;
  private lastSerialDigits = Buffer.alloc(0);

  constructor(private readonly options: RowsOptions) {
    this.kinds = Uint8Array.from(options.kinds.map((k) => KIND[k]));
    const cells = options.kinds.flatMap((k) => (k === 'time' ? [0, 1] : [0])).length;
    this.cellRefs = [...Array(cells).keys()].map((i) => Buffer.concat([CELL_OPEN, ascii(columnLetters(i))]));
    this.starts = new Int32Array(options.kinds.length);
    this.ends = new Int32Array(options.kinds.length);
    this.quoted = new Uint8Array(options.kinds.length);
  }

  /** The rows made of `chunk` (and what an earlier chunk left unfinished). */
  transcode(chunk: Buffer): RowsPiece[] {
    const input = this.held ? Buffer.concat([this.held, chunk]) : chunk;
    const used = this.records(input, false);
    this.held = used < input.length ? Buffer.from(input.subarray(used)) : null;
    return this.take();
  }

  /** The rows of what is left at the end of the input. */
  finish(): RowsPiece[] {
    if (this.held) {
      const input = this.held;
      this.held = null;
      if (this.records(input, true) < input.length)
        throw new Error('pack.xlsx: the CSV ended inside a record');
    }
    return this.take();
  }

  private take(): RowsPiece[] {
    this.handOut();
    const pieces = this.pieces;
    this.pieces = [];
    return pieces;
  }

  /** Hands the bytes written since the last piece out as a piece (the buffer's rest stays in use). */
  private handOut(): void {
    if (this.o === this.pieceStart) return;
    this.pieces.push(this.out.subarray(this.pieceStart, this.o));
    this.pieceStart = this.o;
  }

  /** Room for `n` more bytes: a fresh buffer when this one is full (handed-out bytes are never reused). */
  private ensure(n: number): void {
    if (this.o + n <= this.out.length) return;
    this.handOut();
    this.out = Buffer.allocUnsafe(Math.max(OUT_SIZE, n));
    this.o = this.pieceStart = 0;
  }

  /** Copies a few bytes: a loop beats a native call for the short pieces a row is made of. */
  private put(bytes: Uint8Array): void {
    const out = this.out;
    let o = this.o;
    for (let k = 0; k < bytes.length; k++) out[o++] = bytes[k] as number;
    this.o = o;
  }

  /** Copies input[from, to) to the output. */
  private copy(input: Buffer, from: number, to: number): void {
    if (to - from > 64) {
      this.o += input.copy(this.out, this.o, from, to);
      return;
    }
    const out = this.out;
    let o = this.o;
    for (let k = from; k < to; k++) out[o++] = input[k] as number;
    this.o = o;
  }

  /** Reads whole records from `input`; returns where the first unfinished one starts. */
  private records(input: Buffer, final: boolean): number {
    const fields = this.options.kinds.length;
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
      if (this.headerSkipped) this.row(input, i - pos);
      else this.headerSkipped = true;
      pos = i;
    }
    return pos;
  }

  private row(input: Buffer, recordBytes: number): void {
    this.ensure(160 * this.cellRefs.length + 8 * recordBytes + 64);
    if (this.sheetRows >= this.options.maxRows) {
      this.handOut();
      this.pieces.push(SHEET_BREAK);
      this.sheetRows = 1;
      this.rowDigits[0] = 0x32; // row 2: the first under the new sheet's header
      this.rowDigitsLength = 1;
    }
    this.put(ROW_OPEN);
    this.putRowNumber();
    this.put(ROW_OPEN_END);
    let cell = 0;
    const kinds = this.kinds;
    for (let f = 0; f < kinds.length; f++) {
      const s = this.starts[f] as number;
      const e = this.ends[f] as number;
      const kind = kinds[f];
      if (kind === KIND.text) this.text(input, s, e, this.quoted[f] === 1, false, cell++);
      else if (kind === KIND.amount) this.amount(input, s, e, cell++);
      else if (kind === KIND.time) {
        this.time(input, s, e, cell);
        cell += 2;
      } else this.text(input, s, e, this.quoted[f] === 1, true, cell++);
    }
    this.put(ROW_CLOSE);
    this.sheetRows++;
    this.rows++;
    this.nextRowNumber();
  }

  /** Adds one to the row number's digits. */
  private nextRowNumber(): void {
    const d = this.rowDigits;
    for (let k = this.rowDigitsLength - 1; k >= 0; k--) {
      if (d[k] !== 0x39) {
        d[k] = (d[k] as number) + 1;
        return;
      }
      d[k] = 0x30;
    }
    d.copyWithin(1, 0, this.rowDigitsLength); // 99 → 100: a new leading digit
    d[0] = 0x31;
    this.rowDigitsLength++;
  }

  private putRowNumber(): void {
    const out = this.out;
    const d = this.rowDigits;
    for (let k = 0; k < this.rowDigitsLength; k++) out[this.o++] = d[k] as number;
  }

  /** `<c r="X9` (the caller goes on with the attributes). */
  private ref(cell: number): void {
    this.put(this.cellRefs[cell] as Buffer);
    this.putRowNumber();
  }

  /** `<c r="X9" s="N` (the caller closes the attribute). */
  private open(cell: number, style: number): void {
    this.ref(cell);
    this.put(STYLE_ATTR);
    this.put(STYLE_DIGITS[style] as Buffer);
  }

  private flag(reason: FlagReason): void {
    this.flags[reason] = (this.flags[reason] ?? 0) + 1;
  }

  /** A text cell: unstyled (style 0 is text's look), or written again with the flag's style if flagged. */
  private text(input: Buffer, s: number, e: number, quoted: boolean, json: boolean, cell: number): void {
    if (s === e) return; // NULL or '': no cell
    if (!json && e - s <= SHORT_FIELD) {
      // most text needs nothing but copying
      let i = s;
      while (i < e && SPECIAL[input[i] as number] === 0) i++;
      if (i === e && !isSpace(input[s]) && !isSpace(input[e - 1])) {
        this.ref(cell);
        this.put(INLINE_OPEN);
        this.copy(input, s, e);
        this.put(INLINE_CLOSE);
        return;
      }
    }
    const start = this.o;
    const open = isSpace(input[s]) || isSpace(input[e - 1]) ? INLINE_OPEN_PRESERVE : INLINE_OPEN;
    this.ref(cell);
    this.put(open);
    const reason = this.textContent(input, s, e, quoted, json);
    if (reason) {
      this.o = start; // rare: the row is still in the buffer (row() made room for all of it)
      this.open(cell, STYLE.textFlagged);
      // a cut text ends with `…`: only its start can be whitespace
      const cutOpen = reason === 'text-cut' && !isSpace(input[s]) ? INLINE_OPEN : open;
      this.put(cutOpen);
      this.textContent(input, s, e, quoted, json);
      this.flag(reason);
    }
    this.put(INLINE_CLOSE);
  }

  /** Writes a text's content; returns why the cell must be flagged, if it must. */
  private textContent(
    input: Buffer,
    s: number,
    e: number,
    quoted: boolean,
    json: boolean,
  ): FlagReason | null {
    const special = json ? JSON_SPECIAL : SPECIAL;
    const counted = e - s > SHORT_FIELD; // only a long text can reach a cell's limit
    const out = this.out;
    let units = 0;
    let escaped = false;
    let inString = false;
    let backslash = false;
    let run = s;
    for (let i = s; i < e; i++) {
      const b = input[i] as number;
      if (!counted && special[b] === 0) {
        backslash = false;
        continue;
      }
      if (i > run) this.copy(input, run, i);
      run = i + 1;
      let bytes: Buffer | null = null;
      let add = 1;
      let skip = 0;
      if (b === QUOTE) {
        if (quoted) skip = 1; // a doubled quote: one quote of the text
        if (json && !backslash) inString = !inString;
        backslash = false;
      } else if (b === 0x5c && json) {
        backslash = inString && !backslash;
      } else {
        backslash = false;
        if (b === 0x20 && json && !inString) continue; // PostgreSQL's space after `:` and `,`
        if (b === 0x26) bytes = AMP;
        else if (b === 0x3c) bytes = LT;
        else if (b === 0x3e) bytes = GT;
        else if (b === CR) bytes = CR_ESCAPE;
        else if (b === 0x5f) {
          if (i + 6 < e && (input[i + 1] === 0x78 || input[i + 1] === 0x58) && input[i + 6] === 0x5f) {
            if (isHex(input[i + 2] as number) && isHex(input[i + 3] as number))
              if (isHex(input[i + 4] as number) && isHex(input[i + 5] as number)) bytes = UNDERSCORE_ESCAPE;
          }
        } else if (b < 0x20 && b !== 0x09 && b !== LF) {
          bytes = ascii(`\\u${b.toString(16).toUpperCase().padStart(4, '0')}`);
          escaped = true;
          add = 6;
        } else if (b === 0x7f) {
          bytes = ascii('\\u007F');
          escaped = true;
          add = 6;
        } else if (b === 0xef && input[i + 1] === 0xbf && (input[i + 2] === 0xbe || input[i + 2] === 0xbf)) {
          bytes = ascii(input[i + 2] === 0xbe ? '\\uFFFE' : '\\uFFFF');
          escaped = true;
          add = 6;
          skip = 2;
        } else if (b >= 0x80) {
          // a whole UTF-8 character: 2-4 bytes, 1 UTF-16 unit (2 from four bytes)
          skip = b >= 0xf0 ? 3 : b >= 0xe0 ? 2 : b >= 0xc0 ? 1 : 0;
          if (b >= 0xf0) add = 2;
        }
      }
      if (counted && units + add > MAX_CELL_TEXT - 1) {
        this.put(ELLIPSIS);
        return 'text-cut';
      }
      units += add;
      if (bytes) this.put(bytes);
      else {
        out[this.o++] = b;
        if (skip > 0 && b !== QUOTE) this.copy(input, i + 1, i + 1 + skip);
      }
      i += skip;
      run = i + 1;
    }
    if (e > run) this.copy(input, run, e);
    return escaped ? 'text-escaped' : null;
  }

  private amount(input: Buffer, s: number, e: number, cell: number): void {
    if (s === e) return;
    let i = s;
    const negative = input[i] === 0x2d;
    if (negative) i++;
    const intStart = i;
    while (i < e && digit(input, i) >= 0 && digit(input, i) <= 9) i++;
    const intEnd = i;
    let fracStart = i;
    if (i < e && input[i] === 0x2e) {
      fracStart = ++i;
      while (i < e && digit(input, i) >= 0 && digit(input, i) <= 9) i++;
    }
    const scale = i - fracStart;
    const plain = i === e && intEnd > intStart && (fracStart === intEnd || scale > 0);
    if (plain && this.options.look === 'number' && scale <= MAX_SCALE) {
      if (this.significant(input, intStart, e) <= MAX_SIGNIFICANT_DIGITS) {
        this.open(cell, AMOUNT_BASE + scale);
        this.put(VALUE_OPEN);
        this.copy(input, s, e);
        this.put(VALUE_CLOSE);
        return;
      }
    }
    const flagged = !plain || this.options.look === 'number';
    this.open(cell, flagged ? STYLE.amountTextFlagged : STYLE.amountText);
    this.put(INLINE_OPEN);
    if (flagged) this.copy(input, s, e);
    else {
      if (negative) this.out[this.o++] = 0x2d;
      for (let k = intStart; k < intEnd; k++) {
        if (k > intStart && (intEnd - k) % 3 === 0) this.out[this.o++] = COMMA;
        this.out[this.o++] = input[k] as number;
      }
      this.copy(input, intEnd, e);
    }
    this.put(INLINE_CLOSE);
    if (flagged) this.flag('amount-as-text');
  }

  /** Significant digits of the plain decimal in [s, e) (the point skipped, zeros at both ends not counted). */
  private significant(input: Buffer, s: number, e: number): number {
    let first = -1;
    let last = -1;
    let count = 0;
    for (let i = s; i < e; i++) {
      const b = input[i] as number;
      if (b === 0x2e) continue;
      if (b !== 0x30) {
        if (first < 0) first = count;
        last = count;
      }
      count++;
    }
    return first < 0 ? 0 : last - first + 1;
  }

  /** `YYYY-MM-DDTHH:MM:SS.mmmZ`: a date-time cell (wall clock in the zone) and the exact text. */
  private time(input: Buffer, s: number, e: number, cell: number): void {
    if (s === e) return;
    const utc = e - s === 24 ? this.instant(input, s) : NaN;
    if (!Number.isNaN(utc)) {
      this.open(cell, STYLE.date);
      this.put(VALUE_OPEN);
      this.putSerial(utc + this.offsetAt(utc) * 60_000);
      this.put(VALUE_CLOSE);
    }
    this.ref(cell + 1);
    this.put(INLINE_OPEN);
    this.copy(input, s, e);
    this.put(INLINE_CLOSE);
  }

  /** The instant of the 24 bytes of an ISO UTC text at `s`, or NaN. */
  private instant(input: Buffer, s: number): number {
    if (input[s + 4] !== 0x2d || input[s + 7] !== 0x2d || input[s + 10] !== 0x54 || input[s + 13] !== 0x3a)
      return NaN;
    if (input[s + 16] !== 0x3a || input[s + 19] !== 0x2e || input[s + 23] !== 0x5a) return NaN;
    const dateKey = num(input, s, 4) * 10_000 + num(input, s + 5, 2) * 100 + num(input, s + 8, 2);
    if (dateKey !== this.lastDateKey) {
      // consecutive records share their day: the date is worked out once per day
      const y = Math.floor(dateKey / 10_000);
      const ms = Date.UTC(y, (Math.floor(dateKey / 100) % 100) - 1, dateKey % 100);
      if (Number.isNaN(ms) || new Date(ms).getUTCDate() !== dateKey % 100 || y < 1000) return NaN;
      this.lastDateKey = dateKey;
      this.lastDateMs = ms;
    }
    const h = num(input, s + 11, 2);
    const m = num(input, s + 14, 2);
    const sec = num(input, s + 17, 2);
    if (h > 23 || m > 59 || sec > 59) return NaN;
    return this.lastDateMs + h * 3_600_000 + m * 60_000 + sec * 1000 + num(input, s + 20, 3);
  }

  /** dateSerialText (xlsx-cells.ts) of a wall-clock time, written as bytes. */
  private putSerial(wallClockMs: number): void {
    const { days, fraction } = dateSerialParts(wallClockMs);
    if (days !== this.lastSerialDays) {
      this.lastSerialDays = days;
      this.lastSerialDigits = ascii(`${days}.`);
    }
    this.put(this.lastSerialDigits);
    const out = this.out;
    let q = fraction;
    for (let k = this.o + 9; k >= this.o; k--) {
      out[k] = 0x30 + (q % 10);
      q = Math.floor(q / 10);
    }
    this.o += 10;
  }

  /**
   * The zone's offset at `ms`, looked up once per hour: an hour whose two ends have the same offset is
   * taken to have it throughout (zone rules change offsets at most a few times a year, never twice within
   * an hour); in an hour where it changes, every instant is looked up.
   */
  private offsetAt(ms: number): number {
    const hour = Math.floor(ms / 3_600_000);
    if (hour === this.lastHour) return this.lastOffset;
    const cached = this.offsets.get(hour);
    if (cached !== undefined) {
      this.lastHour = hour;
      this.lastOffset = cached;
      return cached;
    }
    const start = this.options.offsetMinutes(hour * 3_600_000);
    const end = this.options.offsetMinutes(hour * 3_600_000 + 3_599_999);
    if (start !== end) return this.options.offsetMinutes(ms);
    this.offsets.set(hour, start);
    this.lastHour = hour;
    this.lastOffset = start;
    return start;
  }
}
