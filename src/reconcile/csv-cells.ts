/**
 * Pure cell formatting for the reconciliation pack's CSV files.
 *
 * Spreadsheet-formula injection (OWASP "CSV injection"): Excel, LibreOffice and Google Sheets run a cell
 * that starts with `=`, `+`, `-` or `@` as a formula, and some treat a leading tab or carriage return the
 * same way. Free text from the service (descriptions, names, extra_data…) is neutralised by prefixing a
 * single quote, OWASP's recommendation: the spreadsheet then shows the text, and the quote is visible
 * evidence that the cell was altered. A well-formed international phone number (`+` and 6–15 digits, the
 * E.164 shape) is left as it is, so finance can still search by number; a spreadsheet reads it as a
 * number or text, never as a formula.
 * Amounts and timestamps are produced by paysync itself (NUMERIC text, ISO 8601) and are not free text.
 */

const FORMULA_START = /^[=+\-@\t\r]/;
const PHONE = /^\+\d{6,15}$/;

/** True for a cell a spreadsheet could run as a formula (phone numbers excepted). */
export function isFormulaLike(cell: string): boolean {
  return FORMULA_START.test(cell) && !PHONE.test(cell);
}

/** The cell as it is safe to hand to a spreadsheet; null becomes the empty cell. */
export function neutralise(cell: string | null): string {
  if (cell === null) return '';
  return isFormulaLike(cell) ? `'${cell}` : cell;
}

/**
 * Postgres prints jsonb as `{"a": 1, "b": [1, 2]}`: a space after every `:` and `,` outside strings, and
 * nowhere else. This removes exactly those spaces, giving compact JSON while keeping every number's exact
 * text (parsing into JavaScript numbers could alter large or long decimals). Input must be jsonb output.
 */
export function compactJsonbText(text: string): string {
  if (!text.includes(': ') && !text.includes(', ')) return text;
  let out = '';
  let inString = false;
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x20) {
      out += text.slice(from, i);
      from = i + 1;
    }
  }
  return out + text.slice(from);
}
