/**
 * One table of the pack's workbook, written row by row through exceljs's streaming writer with typed
 * cells (xlsx-cells.ts), a frozen bold header row, an autofilter over the whole table and fixed widths.
 *
 * Two things exceljs does not do on its own, done here:
 * - Speed: exceljs looks a cell's style up by object identity and re-keys any other object (about 3x
 *   slower over a 200k-row sheet), so every cell gets one of a few shared style objects.
 * - Flat memory: exceljs writes a sheet's XML into the zip's deflate stream without waiting for it
 *   (measured: about 0.8 KB a row piling up), so after each batch of rows `drain()` waits until the
 *   deflate stream has taken what it was given.
 * A table longer than a sheet holds (1,048,576 rows in Excel) continues on `name (2)`, `name (3)`….
 */
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import type ExcelJS from 'exceljs';
import type { ColumnKind, SheetColumn } from './pack-xlsx-query.js';
import {
  amountCell,
  amountFormat,
  asCellValue,
  compactJsonText,
  DATE_TIME_FORMAT,
  MAX_SHEET_ROWS,
  textCell,
  wallClockCell,
  type Cell,
  type FlagReason,
} from './xlsx-cells.js';

type Style = Partial<ExcelJS.Style>;
const FLAG_FILL: ExcelJS.Fill = { type: 'pattern', pattern: 'solid', fgColor: { argb: 'FFFFEB9C' } };
const HEADER: Style = { font: { bold: true } };
const TEXT: Style = { numFmt: '@' };
const TEXT_FLAGGED: Style = { numFmt: '@', fill: FLAG_FILL };
const DATE: Style = { numFmt: DATE_TIME_FORMAT };
const COUNT: Style = { numFmt: '0' };
const numberStyles = new Map<string, Style>();
/** One shared style object per number format (see the file's header: exceljs keys styles by identity). */
function numberStyle(numFmt: string): Style {
  let style = numberStyles.get(numFmt);
  if (!style) numberStyles.set(numFmt, (style = { numFmt }));
  return style;
}

export interface TableSpec {
  name: string;
  columns: readonly SheetColumn[];
  /** REPORT_TIMEZONE, named in the headers of the date-time columns. */
  zone: string;
  /** Decimals the amount columns show (the most any amount of the table has). */
  decimals: number;
  /** Rows per sheet, header included (Excel's limit; smaller only in tests). */
  maxRows?: number;
  freeze?: boolean;
}

/** What a table wrote: data rows, sheets used, and flagged cells by reason. */
export interface TableReport {
  rows: number;
  sheets: string[];
  flags: Partial<Record<FlagReason, number>>;
}

/** The sheet columns of a spec: a `time` column is two (wall clock in the zone, exact UTC text). */
function sheetColumns(spec: TableSpec): Array<{ header: string; width: number }> {
  return spec.columns.flatMap((c) =>
    c.kind === 'time'
      ? [
          { header: `${c.header} (${spec.zone})`, width: c.width },
          { header: `${c.header} UTC`, width: 26 },
        ]
      : [{ header: c.header, width: c.width }],
  );
}

function cellOf(kind: ColumnKind, value: unknown, decimals: number): Cell {
  const text = value === null || value === undefined ? null : String(value);
  switch (kind) {
    case 'amount':
      return amountCell(text, decimals);
    case 'json':
      return textCell(text === null ? null : compactJsonText(text));
    case 'count': // bigint may come as text: a number when it is a safe integer
      return text !== null && /^-?\d{1,15}$/.test(text) ? { value: Number(text) } : textCell(text);
    default:
      return textCell(text);
  }
}

function styleOf(kind: ColumnKind | 'date', cell: Cell, decimals: number): Style {
  if (cell.flag) return TEXT_FLAGGED;
  if (kind === 'amount') return numberStyle(amountFormat(decimals));
  if (kind === 'date' && cell.value instanceof Date) return DATE;
  if (kind === 'count') return COUNT;
  return TEXT;
}

export class TableWriter {
  private sheet!: ExcelJS.Worksheet;
  private sheetRows = 0;
  private readonly report: TableReport = { rows: 0, sheets: [], flags: {} };
  private readonly headers: Array<{ header: string; width: number }>;

  constructor(
    private readonly workbook: ExcelJS.stream.xlsx.WorkbookWriter,
    private readonly spec: TableSpec,
  ) {
    this.headers = sheetColumns(spec);
    this.open();
  }

  private open(): void {
    const n = this.report.sheets.length + 1;
    const name = n === 1 ? this.spec.name : `${this.spec.name} (${n})`;
    this.report.sheets.push(name);
    const views = this.spec.freeze === false ? [] : [{ state: 'frozen' as const, ySplit: 1 }];
    this.sheet = this.workbook.addWorksheet(name, { views });
    this.sheet.columns = this.headers.map((h) => ({ width: h.width }));
    const header = this.sheet.addRow(this.headers.map((h) => h.header));
    header.eachCell((c) => (c.style = HEADER));
    header.commit();
    this.sheetRows = 1;
  }

  /** Adds one row of values in the spec's column order (a `time` column: wall-clock text, UTC text). */
  add(values: readonly unknown[]): void {
    if (this.sheetRows >= (this.spec.maxRows ?? MAX_SHEET_ROWS)) {
      this.closeSheet();
      this.open();
    }
    const cells: Array<{ cell: Cell; kind: ColumnKind | 'date' }> = [];
    let i = 0;
    for (const column of this.spec.columns) {
      if (column.kind === 'time') {
        cells.push({ cell: wallClockCell(values[i++] as string | null), kind: 'date' });
        cells.push({ cell: textCell(values[i++] as string | null), kind: 'text' });
      } else cells.push({ cell: cellOf(column.kind, values[i++], this.spec.decimals), kind: column.kind });
    }
    const row = this.sheet.addRow(cells.map((c) => asCellValue(c.cell.value)));
    cells.forEach(({ cell, kind }, j) => {
      if (cell.value === null) return;
      row.getCell(j + 1).style = styleOf(kind, cell, this.spec.decimals);
      if (cell.flag) this.report.flags[cell.flag] = (this.report.flags[cell.flag] ?? 0) + 1;
    });
    row.commit();
    this.sheetRows++;
    this.report.rows++;
  }

  /** Waits until the zip has taken the rows written so far (call between batches). */
  async drain(): Promise<void> {
    const stream = (this.sheet as unknown as { stream: { pipes?: Writable[]; buffers?: unknown[] } }).stream;
    if (!Array.isArray(stream.pipes) || !Array.isArray(stream.buffers)) {
      // exceljs is pinned to the version whose StreamBuf this reads; fail loudly rather than grow
      throw new Error('pack.xlsx: the exceljs stream internals changed; check TableWriter.drain');
    }
    for (;;) {
      const target = stream.pipes?.[0];
      if (target) {
        if (target.writableNeedDrain) await once(target, 'drain');
        return;
      }
      // not yet taken up by the zip (an earlier entry is still being compressed): at most ~1 MB waits
      if ((stream.buffers?.length ?? 0) < 16) return;
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  }

  private closeSheet(): void {
    const last = this.headers.length;
    this.sheet.autoFilter = { from: { row: 1, column: 1 }, to: { row: this.sheetRows, column: last } };
    this.sheet.commit();
  }

  /** Ends the table's last sheet. */
  end(): TableReport {
    this.closeSheet();
    return this.report;
  }
}

/**
 * Writes free-form rows of typed cells (the about sheet): text as text, numbers in their own format,
 * flagged cells highlighted; the first column bold. Small: no batching or draining needed.
 */
export function writeFreeSheet(
  workbook: ExcelJS.stream.xlsx.WorkbookWriter,
  name: string,
  rows: readonly Cell[][],
  widths: readonly number[],
): void {
  const sheet = workbook.addWorksheet(name);
  sheet.columns = widths.map((width) => ({ width }));
  for (const cells of rows) {
    const row = sheet.addRow(cells.map((c) => asCellValue(c.value)));
    cells.forEach((cell, j) => {
      if (cell.value === null) return;
      let style: Style = TEXT;
      if (cell.flag) style = TEXT_FLAGGED;
      else if (typeof cell.value === 'number') style = numberStyle(cell.format ?? '0');
      else if (j === 0) style = HEADER;
      row.getCell(j + 1).style = style;
    });
    row.commit();
  }
  sheet.commit();
}
