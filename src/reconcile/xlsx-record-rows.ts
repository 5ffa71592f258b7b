/**
 * The records sheets' rows, made from the very bytes of PostgreSQL's CSV of the day's records (the COPY
 * that writes payments.csv and transfers.csv): one read of the warehouse serves both files, and the
 * rows are built as bytes, without a JavaScript string or object per cell.
 *
 * Contract: bytes in (chunks cut anywhere, xlsx-csv-records.ts), pieces of sheet XML out (the rows under
 * the header row the caller wrote, xlsx-row-bytes.ts), with a sheet break where a sheet is full; every
 * cell is the one xlsx-cells.ts's rules give for the field:
 * - text and json: xlsx-text-cell.ts;
 * - time: two cells, xlsx-time-cells.ts;
 * - amount (here): in a `number` column, a number whose format is the amount's own scale; in a `text`
 *   column, the exact decimal with thousands separators; an amount that fits neither (NaN) is flagged text.
 * Flagged cells are counted by reason, in the order they are met.
 */
import { CsvRecords } from './xlsx-csv-records.js';
import { MAX_SCALE, MAX_SIGNIFICANT_DIGITS, type AmountLook, type FlagReason } from './xlsx-cells.js';
import { RowBytes, type RowsPiece } from './xlsx-row-bytes.js';
import { AMOUNT_BASE, STYLE } from './xlsx-styles.js';
import { writeTextCell } from './xlsx-text-cell.js';
import { TimeCells } from './xlsx-time-cells.js';

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

const COMMA = 0x2c;
const KIND = { text: 0, json: 1, amount: 2, time: 3 } as const;

const isDigit = (b: number) => b >= 0x30 && b <= 0x39;

export class RecordRowsTranscoder {
  /** Records written as rows. */
  rows = 0;
  readonly flags: Partial<Record<FlagReason, number>> = {};
  /** Rows of the current sheet, its header included (the caller wrote the header). */
  private sheetRows = 1;
  private readonly kinds: Uint8Array;
  private readonly cells: number;
  private readonly w: RowBytes;
  private readonly csv: CsvRecords;
  private readonly times: TimeCells;

  constructor(private readonly options: RowsOptions) {
    this.kinds = Uint8Array.from(options.kinds.map((k) => KIND[k]));
    this.cells = options.kinds.flatMap((k) => (k === 'time' ? [0, 1] : [0])).length;
    this.w = new RowBytes(this.cells);
    this.csv = new CsvRecords(options.kinds.length, (input, recordBytes) => this.row(input, recordBytes));
    this.times = new TimeCells(options.offsetMinutes);
  }

  /** The rows made of `chunk` (and what an earlier chunk left unfinished). */
  transcode(chunk: Buffer): RowsPiece[] {
    this.csv.feed(chunk);
    return this.w.take();
  }

  /** The rows of what is left at the end of the input. */
  finish(): RowsPiece[] {
    this.csv.end();
    return this.w.take();
  }

  private row(input: Buffer, recordBytes: number): void {
    const w = this.w;
    w.ensure(160 * this.cells + 8 * recordBytes + 64);
    if (this.sheetRows >= this.options.maxRows) {
      w.sheetBreak();
      this.sheetRows = 1;
    }
    w.openRow();
    let cell = 0;
    const { kinds, csv } = this;
    for (let f = 0; f < kinds.length; f++) {
      const s = csv.starts[f] as number;
      const e = csv.ends[f] as number;
      const kind = kinds[f];
      if (kind === KIND.text || kind === KIND.json) {
        const quoted = csv.quoted[f] === 1;
        this.flag(writeTextCell(w, input, s, e, quoted, kind === KIND.json, cell++));
      } else if (kind === KIND.amount) this.amount(input, s, e, cell++);
      else {
        this.times.write(w, input, s, e, cell);
        cell += 2;
      }
    }
    w.closeRow();
    this.sheetRows++;
    this.rows++;
  }

  private flag(reason: FlagReason | null): void {
    if (reason) this.flags[reason] = (this.flags[reason] ?? 0) + 1;
  }

  private amount(input: Buffer, s: number, e: number, cell: number): void {
    if (s === e) return;
    const w = this.w;
    let i = s;
    const negative = input[i] === 0x2d;
    if (negative) i++;
    const intStart = i;
    while (i < e && isDigit(input[i] as number)) i++;
    const intEnd = i;
    let fracStart = i;
    if (i < e && input[i] === 0x2e) {
      fracStart = ++i;
      while (i < e && isDigit(input[i] as number)) i++;
    }
    const scale = i - fracStart;
    const plain = i === e && intEnd > intStart && (fracStart === intEnd || scale > 0);
    if (plain && this.options.look === 'number' && scale <= MAX_SCALE) {
      if (significant(input, intStart, e) <= MAX_SIGNIFICANT_DIGITS) {
        w.open(cell, AMOUNT_BASE + scale);
        w.openValue();
        w.copy(input, s, e);
        w.closeValue();
        return;
      }
    }
    const flagged = !plain || this.options.look === 'number';
    w.open(cell, flagged ? STYLE.amountTextFlagged : STYLE.amountText);
    w.openText(false);
    if (flagged) w.copy(input, s, e);
    else {
      if (negative) w.out[w.o++] = 0x2d;
      for (let k = intStart; k < intEnd; k++) {
        if (k > intStart && (intEnd - k) % 3 === 0) w.out[w.o++] = COMMA;
        w.out[w.o++] = input[k] as number;
      }
      w.copy(input, intEnd, e);
    }
    w.closeText();
    if (flagged) this.flag('amount-as-text');
  }
}

/** Significant digits of the plain decimal in [s, e) (the point skipped, zeros at both ends not counted). */
function significant(input: Buffer, s: number, e: number): number {
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
