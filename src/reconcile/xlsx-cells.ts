/**
 * Pure cell rules of the pack's workbook (pack.xlsx): what a spreadsheet can show exactly, and what must
 * be shown as flagged text instead. Nothing here rounds or drops a character silently. The records
 * sheets apply the same rules to bytes as they stream (xlsx-rows.ts); these are the rules for the small
 * sheets and the reference the byte path is tested against.
 *
 * - Amounts, one look per column (`amountLook`): a spreadsheet holds an IEEE double and shows at most 15
 *   significant digits, so a column is numbers only when every amount in it has at most 15 significant
 *   digits (zeros at either end aside) and at most 30 decimals, a format's limit (then the double shows
 *   back as the very same decimal, `101.0100` included: past 15 digits a spreadsheet shows zeros). Each number
 *   cell then has the number format of its own scale (`1,500`, `1,500.5`, `0.05`): exact, never padded
 *   to another amount's decimals. A column holding even one amount beyond that is text in full, every
 *   amount as its exact decimal with thousands separators (`9,007,199,255,313,891.11`), right-aligned:
 *   a column never mixes numbers and text.
 * - Text: a workbook is XML 1.0 plus the format's own `_xHHHH_` escape, which Excel and LibreOffice
 *   decode in inline strings. A carriage return is written exactly (`_x000D_`), and a literal `_xHHHH_`
 *   in the data is itself escaped (`_x005F_xHHHH_`) so it reads back as written. Other control characters
 *   are written visibly (`\u0001`) and the cell is flagged: they are invisible in a cell, and LibreOffice
 *   drops them without a word. A text longer than a cell holds (32,767 characters in Excel) is cut and
 *   flagged. payments.csv keeps the exact text in every case.
 * - Times: a spreadsheet date has no time zone, so a timestamp is written as its wall-clock time in
 *   REPORT_TIMEZONE (a JavaScript Date whose UTC fields are that wall clock); the exact instant goes in an
 *   ISO text column beside it.
 */

/** Excel's limit on the characters of one cell. */
export const MAX_CELL_TEXT = 32_767;
/** Significant digits a spreadsheet number shows exactly (Excel's precision). */
export const MAX_SIGNIFICANT_DIGITS = 15;
/** Decimals a number format can show (Excel's limit); digits past the 15 significant ones show as zeros. */
export const MAX_SCALE = 30;
/** Rows a sheet holds, the header included (Excel's limit). */
export const MAX_SHEET_ROWS = 1_048_576;

export type FlagReason = 'amount-as-text' | 'text-escaped' | 'text-cut';

/** How a column's amounts look: all numbers, or all exact text. */
export type AmountLook = 'number' | 'text';

export interface Cell {
  value: string | number | Date | null;
  /** Set when the cell does not show the warehouse's value as it is (then the cell is highlighted). */
  flag?: FlagReason;
  /** An amount number: the decimals its format shows (its own scale). */
  scale?: number;
  /** An amount number: the exact decimal it was read from, written as the cell's value. */
  decimal?: string;
  /** An amount written as text (right-aligned like a number). */
  amountText?: boolean;
  /** A whole number shown with thousands separators (counts). */
  count?: boolean;
  /** Totals rows and labels. */
  bold?: boolean;
  /** A table's header cell. */
  header?: boolean;
}

const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

/** Decimals after the point in a NUMERIC text (0 for anything that is not a plain decimal). */
export function scaleOf(decimal: string): number {
  return DECIMAL.exec(decimal)?.[3]?.length ?? 0;
}

/** Whether a spreadsheet number shows `decimal` exactly at its own scale. */
export function isExactNumber(decimal: string): boolean {
  const m = DECIMAL.exec(decimal);
  if (!m) return false; // NaN, Infinity, anything unexpected
  const fraction = m[3] ?? '';
  if (fraction.length > MAX_SCALE) return false;
  const significant = `${m[2]}${fraction}`.replace(/^0+/, '').replace(/0+$/, '');
  return significant.length <= MAX_SIGNIFICANT_DIGITS;
}

/** The look of a column holding these amounts (NULLs aside). */
export function amountLook(amounts: Iterable<string | null>): AmountLook {
  for (const a of amounts) if (a !== null && !isExactNumber(a)) return 'text';
  return 'number';
}

/** A decimal text with thousands separators (`-1234567.5` → `-1,234,567.5`); anything else unchanged. */
export function groupedDecimal(decimal: string): string {
  const m = DECIMAL.exec(decimal);
  if (!m) return decimal;
  const int = (m[2] as string).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${m[1]}${int}${m[3] === undefined ? '' : `.${m[3]}`}`;
}

/** An amount cell in a column of the given look. */
export function amountCell(decimal: string | null, look: AmountLook): Cell {
  if (decimal === null) return { value: null };
  if (look === 'text') {
    const plain = DECIMAL.test(decimal);
    return plain
      ? { value: groupedDecimal(decimal), amountText: true }
      : { value: decimal, amountText: true, flag: 'amount-as-text' };
  }
  if (!isExactNumber(decimal)) return { value: decimal, amountText: true, flag: 'amount-as-text' };
  return { value: Number(decimal), scale: scaleOf(decimal), decimal };
}

/** The number format of an amount at `scale` decimals, with thousands separators. */
export function amountFormat(scale: number): string {
  return scale > 0 ? `#,##0.${'0'.repeat(scale)}` : '#,##0';
}

// XML 1.0 cannot carry these; CR, tab and line feed are carried (CR through the format's escape)
// eslint-disable-next-line no-control-regex
const NOT_KEPT = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F\uFFFE\uFFFF]/g;

const escapeChar = (c: string) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;

const NOT_KEPT_ONE = new RegExp(`^${NOT_KEPT.source}$`);

/**
 * A text cell holding exactly `text` when a workbook can, else a visible stand-in, flagged. A text longer
 * than a cell holds is cut before the whole character (or stand-in) that would pass the limit.
 */
export function textCell(text: string | null): Cell {
  if (text === null || text === '') return { value: null };
  NOT_KEPT.lastIndex = 0;
  const escaped = NOT_KEPT.test(text);
  if (text.length * 6 < MAX_CELL_TEXT) {
    // short: even if every character became a stand-in it would fit
    return escaped ? { value: text.replace(NOT_KEPT, escapeChar), flag: 'text-escaped' } : { value: text };
  }
  const parts: string[] = [];
  let units = 0;
  for (const ch of text) {
    const piece = NOT_KEPT_ONE.test(ch) ? escapeChar(ch) : ch;
    if (units + piece.length > MAX_CELL_TEXT - 1) return { value: `${parts.join('')}…`, flag: 'text-cut' };
    units += piece.length;
    parts.push(piece);
  }
  return escaped ? { value: parts.join(''), flag: 'text-escaped' } : { value: text };
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

const DAY_MS = 86_400_000;
/** Days from the spreadsheet epoch (1899-12-30) to 1970-01-01. */
export const SERIAL_EPOCH_DAYS = 25_569;

/**
 * A wall-clock time (epoch ms whose UTC fields are the wall clock) as a spreadsheet date serial: whole
 * days since 1899-12-30, then the time of day as a fraction written to 10 decimals, `q` (1e-10 of a day
 * is 8.64 µs, so every millisecond reads back exactly). Written as text by the small sheets and, digit
 * by digit, by the records sheets: the same formula for both.
 */
export function dateSerialParts(wallClockMs: number): { days: number; fraction: number } {
  const days = Math.floor(wallClockMs / DAY_MS);
  const msOfDay = wallClockMs - days * DAY_MS;
  return { days: days + SERIAL_EPOCH_DAYS, fraction: Math.round((msOfDay * 1e10) / DAY_MS) };
}

export function dateSerialText(wallClockMs: number): string {
  const { days, fraction } = dateSerialParts(wallClockMs);
  return `${days}.${String(fraction).padStart(10, '0')}`;
}

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
