/**
 * PostgreSQL array literals for the page statement's column parameters, built here instead of by pg (and
 * the JSON array that carries a `json` column instead of one).
 *
 * pg turns an array parameter into the same text (`utils.arrayString`), but runs two regular-expression
 * replacements and a type dispatch on every element: 13 columns × 1000 rows a page, about 6% of a
 * backfill's worker CPU. Here an element is escaped only when it holds a quote or a backslash, which
 * nearly none does. PostgreSQL receives byte for byte what pg would have sent
 * (test/upstream/parse-equivalence.test.ts compares the two on generated values).
 */
import type { Column, Row } from './stream-tables.js';

const NEEDS_ESCAPE = /["\\]/;
/** A backslash before each quote and backslash, as pg escapes an element (string replaces: faster than a regex). */
const escaped = (value: string): string => value.replaceAll('\\', '\\\\').replaceAll('"', '\\"');
const SEPARATOR = '\n';
const SEPARATOR_OF_ESCAPED = '\u0000';

/** One element, always quoted as pg quotes it (so `NULL` the text stays text, and spaces survive). */
function element(value: string): string {
  return NEEDS_ESCAPE.test(value) ? `"${escaped(value)}"` : `"${value}"`;
}

/**
 * Column `c` of `rows` as an array literal, `{"a","b",NULL}` (null and undefined are SQL NULL): one of the
 * page statement's column-major parameters. A column without NULL is joined natively, and escaped in one
 * pass when its values hold quotes or backslashes (JSON texts); a column with NULL is built element by
 * element.
 */
export function columnLiteral(rows: readonly Row[], c: number): string {
  const values = new Array<string>(rows.length);
  for (let r = 0; r < rows.length; r++) {
    const value = (rows[r] as Row)[c];
    if (value === null || value === undefined) return columnLiteralByElement(rows, c);
    values[r] = value;
  }
  if (values.length === 0) return '{}';
  const joined = values.join(SEPARATOR);
  if (!NEEDS_ESCAPE.test(joined)) return `{"${values.join('","')}"}`;
  // a column of JSON texts (extra_data) has quotes in every value: escaped in one pass over
  // the whole column, the elements told apart by a NUL, which no storable value holds (page-prep.ts)
  if (joined.includes(SEPARATOR_OF_ESCAPED)) return columnLiteralByElement(rows, c);
  return `{"${escaped(values.join(SEPARATOR_OF_ESCAPED)).replaceAll(SEPARATOR_OF_ESCAPED, '","')}"}`;
}

function columnLiteralByElement(rows: readonly Row[], c: number): string {
  let out = '{';
  for (let r = 0; r < rows.length; r++) {
    if (r > 0) out += ',';
    const value = (rows[r] as Row)[c];
    out += value === null || value === undefined ? 'NULL' : element(value);
  }
  return `${out}}`;
}

/**
 * Column `c` of `rows`, each value a JSON text, as the text of one JSON array (null and undefined are
 * JSON `null`): the values joined as they are, nothing escaped. Null when every value is (a page without
 * unknown fields, the common one): the statement then reads no element and gives every row SQL NULL.
 */
export function jsonColumnArray(rows: readonly Row[], c: number): string | null {
  const values = new Array<string>(rows.length);
  let present = false;
  for (let r = 0; r < rows.length; r++) {
    const value = (rows[r] as Row)[c];
    if (value === null || value === undefined) values[r] = 'null';
    else {
      values[r] = value;
      present = true;
    }
  }
  return present ? `[${values.join(',')}]` : null;
}

/**
 * The page statement's column parameters (page-sql.ts `incomingSql`): a `json` column as one JSON array,
 * every other column as an array literal.
 */
export function columnParams(rows: readonly Row[], columns: readonly Column[]): (string | null)[] {
  const params = new Array<string | null>(columns.length);
  for (let c = 0; c < columns.length; c++)
    params[c] = (columns[c] as Column).type === 'json' ? jsonColumnArray(rows, c) : columnLiteral(rows, c);
  return params;
}
