/**
 * Pure cell rules of the pack's workbook (pack.xlsx): what a spreadsheet can show exactly, and what must
 * be shown as flagged text instead. Nothing here rounds or drops a character silently.
 *
 * - Amounts: NUMERIC text from PostgreSQL. A spreadsheet holds an IEEE double and shows at most 15
 *   significant digits (Excel), so an amount becomes a number only when it has at most 15 significant
 *   digits, no more decimals than the column's format shows, and the double prints back to the very same
 *   decimal text (a round-trip check on the string); otherwise it stays text and is flagged.
 * - Text: a workbook is XML 1.0. Control characters other than tab and line feed cannot be written at
 *   all (exceljs drops them without a word), and XML turns a carriage return into a line feed when the
 *   file is read. Such characters are written visibly (`\u0001`, `\u000D`) and the cell is flagged; a
 *   text longer than a cell holds (32,767 characters in Excel) is cut and flagged. payments.csv keeps the
 *   exact text in every case.
 * - Whitespace: LibreOffice trims the spaces, tabs and line feeds at the ends of a plain string cell's
 *   value (`t="str"`, what exceljs writes) when it opens the file; an inline string with
 *   `xml:space="preserve"` keeps them, so a text starting or ending with one is written that way
 *   (`asCellValue`). Excel reads `_xHHHH_` inside such a string as an escape; LibreOffice does not: a
 *   text with both edge spaces and that pattern (never seen) would show differently in the two.
 * - Times: a spreadsheet date has no time zone, so a timestamp is written as its wall-clock time in
 *   REPORT_TIMEZONE (a JavaScript Date whose UTC fields are that wall clock: exceljs turns it into the
 *   serial number without any local-zone arithmetic); the exact instant goes in an ISO text column.
 */

/** Excel's limit on the characters of one cell. */
export const MAX_CELL_TEXT = 32_767;
/** Significant digits a spreadsheet shows of a number (Excel's precision). */
export const MAX_SIGNIFICANT_DIGITS = 15;
/** Rows a sheet holds, the header included (Excel's limit). */
export const MAX_SHEET_ROWS = 1_048_576;

export type FlagReason = 'amount-as-text' | 'text-escaped' | 'text-cut';

export interface Cell {
  value: string | number | Date | null;
  /** Set when the cell does not show the warehouse's value as it is (then the cell is highlighted). */
  flag?: FlagReason;
  /** The number format of a number cell, when the column has none of its own. */
  format?: string;
}

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

/** Decimals after the point in a NUMERIC text (0 for anything that is not a plain decimal). */
export function scaleOf(decimal: string): number {
  return DECIMAL.exec(decimal)?.[3]?.length ?? 0;
}

/** The number a spreadsheet shows as exactly `decimal` with `decimals` places, or null. */
export function exactNumber(decimal: string, decimals: number): number | null {
  const m = DECIMAL.exec(decimal);
  if (!m) return null; // NaN, Infinity, anything unexpected: shown as text
  const fraction = m[3] ?? '';
  if (fraction.length > decimals) return null;
  const significant = `${m[2]}${fraction}`.replace(/^0+/, '').replace(/0+$/, '');
  if (significant.length > MAX_SIGNIFICANT_DIGITS) return null;
  const n = Number(decimal);
  if (!Number.isFinite(n) || Math.abs(n) >= 1e21) return null;
  // toFixed is exact decimal arithmetic on the double: the round trip must give the same text back
  return n.toFixed(fraction.length) === decimal ? n : null;
}

/** An amount cell: a number when exact at `decimals` places, else the decimal text, flagged. */
export function amountCell(decimal: string | null, decimals: number): Cell {
  if (decimal === null) return { value: null };
  const n = exactNumber(decimal, decimals);
  return n === null ? { value: decimal, flag: 'amount-as-text' } : { value: n };
}

/** The number format showing `decimals` places, with thousands separators. */
export function amountFormat(decimals: number): string {
  return decimals > 0 ? `#,##0.${'0'.repeat(decimals)}` : '#,##0';
}

// XML 1.0 cannot carry these at all; CR is carried but read back as LF
// eslint-disable-next-line no-control-regex
const NOT_KEPT = /[\u0000-\u0008\u000B\u000C\u000D\u000E-\u001F\u007F\uFFFE\uFFFF]/g;

const escapeChar = (c: string) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;

/** A text cell holding exactly `text` when a workbook can, else a visible stand-in, flagged. */
export function textCell(text: string | null): Cell {
  if (text === null || text === '') return { value: null };
  let value = text;
  let flag: FlagReason | undefined;
  NOT_KEPT.lastIndex = 0;
  if (NOT_KEPT.test(value)) {
    value = value.replace(NOT_KEPT, escapeChar);
    flag = 'text-escaped';
  }
  if (value.length > MAX_CELL_TEXT) {
    value = value.slice(0, MAX_CELL_TEXT - 1);
    if (/[\uD800-\uDBFF]$/.test(value)) value = value.slice(0, -1); // never half a character
    value += '…';
    flag = 'text-cut';
  }
  return flag ? { value, flag } : { value };
}

/**
 * A date-time cell from the wall-clock text `YYYY-MM-DDTHH:MM:SS.mmm` of REPORT_TIMEZONE (printed by
 * PostgreSQL). The Date's UTC fields are that wall clock, which is what a spreadsheet date means.
 */
export function wallClockCell(local: string | null): Cell {
  if (local === null) return { value: null };
  const ms = Date.parse(`${local}Z`);
  return Number.isNaN(ms) ? textCell(local) : { value: new Date(ms) };
}

/** The spreadsheet format of the date-time cells: to the millisecond, as the service records them. */
export const DATE_TIME_FORMAT = 'yyyy-mm-dd hh:mm:ss.000';

/**
 * jsonb text as the service wrote it: PostgreSQL prints a space after every `:` and `,` outside strings,
 * the service does not (the same compaction pack-csv.ts applies to the CSV's bytes). Numbers keep their
 * exact text.
 */
export function compactJsonText(text: string): string {
  let out = '';
  let inString = false;
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x20) {
      out += text.slice(from, i);
      from = i + 1;
    }
  }
  return out + text.slice(from);
}

const EDGE_WHITESPACE = /^[ \t\n]|[ \t\n]$/;

/** The value to hand exceljs: a text with whitespace at either end as an inline string that keeps it. */
export function asCellValue(value: Cell['value']): Cell['value'] | { richText: Array<{ text: string }> } {
  return typeof value === 'string' && EDGE_WHITESPACE.test(value) ? { richText: [{ text: value }] } : value;
}
