/**
 * Where a records sheet's rows are written as bytes (xlsx-record-rows.ts): one output buffer written at
 * `o`, handed out in pieces, with a sheet break between two pieces when a sheet is full; the current row's
 * number kept as ASCII digits (incremented in place); and the SpreadsheetML fragments a row is made of.
 *
 * Contract: a piece handed out is never written again (a full buffer is replaced, not reused), so the
 * caller may hold the pieces while the next rows are made. A row's bytes stay in the buffer until the
 * next row's `ensure`, so a cell writer may rewind `o` to rewrite a cell of the current row. The cell
 * writers (xlsx-text-cell.ts, xlsx-time-cells.ts, xlsx-record-rows.ts) write `out` directly: a row is
 * made without a JavaScript string or object per cell.
 */
import { columnLetters } from './xlsx-sheet.js';

/** Between two pieces of rows: the sheet is full, the next rows start a new one. */
export const SHEET_BREAK = Symbol('sheet break');
export type RowsPiece = Buffer | typeof SHEET_BREAK;

const OUT_SIZE = 1 << 18;

export const ascii = (s: string) => Buffer.from(s, 'latin1');
// Module-local on purpose: V8 folds a module's own constants into the code that writes them, not
// imported ones, so the cell writers call the methods below rather than import these.
const CELL_OPEN = ascii('<c r="');
const CELL_OPEN_NEXT = ascii('<c');
const REF_CLOSE = 0x22; // the reference's closing quote
const STYLE_ATTR = ascii(' s="');
const INLINE_OPEN = ascii(' t="inlineStr"><is><t>');
const INLINE_OPEN_PRESERVE = ascii(' t="inlineStr"><is><t xml:space="preserve">');
const INLINE_CLOSE = ascii('</t></is></c>');
const VALUE_OPEN = ascii('><v>');
const VALUE_CLOSE = ascii('</v></c>');
const ROW_OPEN = ascii('<row r="');
const ROW_OPEN_END = ascii('">');
const ROW_CLOSE = ascii('</row>');
const STYLE_DIGITS = [...Array(128).keys()].map((n) => ascii(String(n)));

export class RowBytes {
  /** Rows are written at `o`; `pieceStart` is where the bytes not yet handed out begin. */
  out = Buffer.allocUnsafe(OUT_SIZE);
  o = 0;
  private pieceStart = 0;
  private pieces: RowsPiece[] = [];
  /** `<c r="A`, `<c r="B`, … for each cell of a row. */
  private readonly cellRefs: Buffer[];
  /** The current row's number as ASCII digits (incremented in place). */
  private readonly rowDigits = Buffer.from('2000000000', 'latin1');
  private rowDigitsLength = 1;
  /** The cell of the current row written last (-1: none yet), and the one before it. */
  private lastCell = -1;
  private cellBefore = -1;

  /** `cells`: the cells of a row (the first row written is row 2, under the header). */
  constructor(cells: number) {
    this.cellRefs = [...Array(cells).keys()].map((i) => Buffer.concat([CELL_OPEN, ascii(columnLetters(i))]));
  }

  /** The pieces made since the last call. */
  take(): RowsPiece[] {
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

  /** Ends the sheet: the next row is row 2 of a new one. */
  sheetBreak(): void {
    this.handOut();
    this.pieces.push(SHEET_BREAK);
    this.rowDigits[0] = 0x32; // row 2: the first under the new sheet's header
    this.rowDigitsLength = 1;
  }

  /** Room for `n` more bytes: a fresh buffer when this one is full (handed-out bytes are never reused). */
  ensure(n: number): void {
    if (this.o + n <= this.out.length) return;
    this.handOut();
    this.out = Buffer.allocUnsafe(Math.max(OUT_SIZE, n));
    this.o = this.pieceStart = 0;
  }

  /** Copies a few bytes: a loop beats a native call for the short pieces a row is made of. */
  put(bytes: Uint8Array): void {
    const out = this.out;
    let o = this.o;
    for (let k = 0; k < bytes.length; k++) out[o++] = bytes[k] as number;
    this.o = o;
  }

  /** Copies input[from, to) to the output. */
  copy(input: Buffer, from: number, to: number): void {
    if (to - from > 64) {
      this.o += input.copy(this.out, this.o, from, to);
      return;
    }
    const out = this.out;
    let o = this.o;
    for (let k = from; k < to; k++) out[o++] = input[k] as number;
    this.o = o;
  }

  /** `<row r="9">` */
  openRow(): void {
    this.lastCell = -1;
    this.put(ROW_OPEN);
    this.putRowNumber();
    this.put(ROW_OPEN_END);
  }

  /** `</row>`; the next row is numbered one more. */
  closeRow(): void {
    this.put(ROW_CLOSE);
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

  /**
   * `<c r="X9"`, or `<c` for the cell right after the one written last in the row (the caller goes on
   * with the attributes). A cell without `r` is the next column (ECMA-376 §18.3.1.4: `r` is optional),
   * which spares about an eighth of a records sheet's XML; the first cell of a row and a cell after an
   * empty one (a NULL field makes no cell) carry their reference.
   */
  ref(cell: number): void {
    this.cellBefore = this.lastCell;
    if (cell === this.lastCell + 1 && cell > 0) this.put(CELL_OPEN_NEXT);
    else {
      this.put(this.cellRefs[cell] as Buffer);
      this.putRowNumber();
      this.out[this.o++] = REF_CLOSE;
    }
    this.lastCell = cell;
  }

  /** Takes the cell begun at `start` back, to write it again (it is the current row's last). */
  rewindCell(start: number): void {
    this.o = start;
    this.lastCell = this.cellBefore;
  }

  /** `<c r="X9" s="N"` (ref's rule for `r`). */
  open(cell: number, style: number): void {
    this.ref(cell);
    this.put(STYLE_ATTR);
    this.put(STYLE_DIGITS[style] as Buffer);
    this.out[this.o++] = REF_CLOSE;
  }

  /** After `ref` or `open`: an inline string follows (`preserve`: it starts or ends with whitespace). */
  openText(preserve: boolean): void {
    this.put(preserve ? INLINE_OPEN_PRESERVE : INLINE_OPEN);
  }

  /** Ends the inline string and the cell. */
  closeText(): void {
    this.put(INLINE_CLOSE);
  }

  /** After `open`: a number's digits follow. */
  openValue(): void {
    this.put(VALUE_OPEN);
  }

  /** Ends the number and the cell. */
  closeValue(): void {
    this.put(VALUE_CLOSE);
  }
}
