/**
 * Exact JSON for money.
 *
 * The interface sends `amount` as a JSON number. `JSON.parse` turns every number into a double, which is
 * exact only when the literal is the double's own shortest form (what any JavaScript service writes:
 * `1500.5`, `250000000`). A literal such as `1500.50` or `12345678901234567.89` would come back changed.
 *
 * `parseExactJson` keeps the fast native parser for the common case and proves it safe: it scans every
 * number literal outside strings, and only when one of them would not survive a round trip through a
 * double does it parse with lossless-json, keeping those numbers as `LosslessNumber` (their exact text).
 * (A first version scanned with a regex that also matched the `:05` of timestamps inside strings, so
 * every page fell to the slow parser: 35% of a backfill's CPU in the profile.)
 */
import { LosslessNumber, parse as parseLossless, stringify as stringifyLossless } from 'lossless-json';

/** True when `literal` is exactly what `String(Number(literal))` gives back. */
export function isCanonicalNumber(literal: string): boolean {
  return String(Number(literal)) === literal;
}

const QUOTE = 34;
const BACKSLASH = 92;

/** Index just past the string literal opening at `start` (a quote), or -1 when it never closes. */
function skipString(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) return -1;
    let backslashes = 0;
    for (let b = quote - 1; text.charCodeAt(b) === BACKSLASH; b--) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

function isNumberChar(c: number): boolean {
  return (c >= 48 && c <= 57) || c === 46 || c === 101 || c === 69 || c === 43 || c === 45;
}

/**
 * Whether a JSON text holds a number literal a double would alter. Strings are skipped (a timestamp's
 * `:05` is not a number), so the common page — canonical amounts, text everywhere else — stays on the
 * native parser.
 */
export function needsLosslessParse(text: string): boolean {
  for (let i = 0; i < text.length;) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      i = skipString(text, i);
      if (i < 0) return false; // malformed: JSON.parse will say so
    } else if (c === 45 || (c >= 48 && c <= 57)) {
      let j = i + 1;
      while (j < text.length && isNumberChar(text.charCodeAt(j))) j++;
      if (!isCanonicalNumber(text.slice(i, j))) return true;
      i = j;
    } else {
      i++;
    }
  }
  return false;
}

function parseNumberExactly(literal: string): number | LosslessNumber {
  return isCanonicalNumber(literal) ? Number(literal) : new LosslessNumber(literal);
}

/** Parses JSON text; numbers a double would alter come back as `LosslessNumber`. Throws SyntaxError. */
export function parseExactJson(text: string): unknown {
  if (!needsLosslessParse(text)) return JSON.parse(text);
  return parseLossless(text, null, parseNumberExactly);
}

export function isLosslessNumber(value: unknown): value is LosslessNumber {
  return value instanceof LosslessNumber;
}

/** The exact decimal text of a parsed JSON number. */
export function decimalText(value: number | LosslessNumber): string {
  return typeof value === 'number' ? String(value) : value.toString();
}

function containsLossless(value: unknown): boolean {
  if (value instanceof LosslessNumber) return true;
  if (Array.isArray(value)) return value.some(containsLossless);
  if (value !== null && typeof value === 'object') return Object.values(value).some(containsLossless);
  return false;
}

/** Serialises a parsed value back to JSON text, keeping every number exactly as it was sent. */
export function toExactJson(value: unknown): string {
  if (!containsLossless(value)) return JSON.stringify(value);
  return stringifyLossless(value) as string;
}

export { LosslessNumber };
