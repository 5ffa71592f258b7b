/**
 * Pure cell formatting for the reconciliation pack's CSV files.
 *
 * Spreadsheet-formula injection (OWASP "CSV injection"): Excel, LibreOffice and Google Sheets run a cell
 * that starts with `=`, `+`, `-` or `@` as a formula, and some treat a leading tab or carriage return the
 * same way. Leading spaces do not protect a cell: LibreOffice's "trim spaces" import option (and users
 * who trim) turn `" =1+1"` into a formula, so what counts is the first character after any spaces.
 * Free text from the service (descriptions, names, extra_data…) is neutralised by prefixing a
 * single quote, OWASP's recommendation: the spreadsheet then shows the text, and the quote is visible
 * evidence that the cell was altered. A well-formed international phone number (`+` and 6–15 digits, the
 * E.164 shape) is left as it is, so finance can still search by number; a spreadsheet reads it as a
 * number or text, never as a formula.
 * Amounts and timestamps are produced by paysync itself (NUMERIC text, ISO 8601) and are not free text.
 * The records files apply the same rule to the bytes PostgreSQL writes (pack-csv.ts), from the same
 * constants; test/reconcile/pack-csv.test.ts checks that both give the same cells.
 */

/** The characters a formula cell can start with. */
export const FORMULA_FIRST_CHARACTERS = ['=', '+', '-', '@', '\t', '\r'] as const;
/** A phone number: `+` then this many digits (E.164). */
export const PHONE_DIGITS = { min: 6, max: 15 } as const;

// the same rule as the two constants above, after any leading spaces (test/reconcile/csv-cells.test.ts holds them
// in step)
const FORMULA_START = /^ *[=+\-@\t\r]/;
const PHONE = /^\+\d{6,15}$/;

/** True for a cell a spreadsheet could run as a formula, even once trimmed (phone numbers excepted). */
export function isFormulaLike(cell: string): boolean {
  return FORMULA_START.test(cell) && !PHONE.test(cell);
}

/** The cell as it is safe to hand to a spreadsheet; null becomes the empty cell. */
export function neutralise(cell: string | null): string {
  if (cell === null) return '';
  return isFormulaLike(cell) ? `'${cell}` : cell;
}
