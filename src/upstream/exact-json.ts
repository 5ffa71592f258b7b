/**
 * Exact JSON for money.
 *
 * The interface sends `amount` as a JSON number. `JSON.parse` turns every number into a double, which is
 * exact only when the literal is the double's own shortest form (what any JavaScript service writes:
 * `1500.5`, `250000000`). A literal such as `1500.50` or `12345678901234567.89` would come back changed.
 *
 * `parseExactJson` keeps the fast native parser for the common case and proves it safe: one pass
 * (`scanJson`) looks at every number literal outside strings and every object's keys; only when a number
 * would not survive a round trip through a double, or an object names a key twice, does it parse with the
 * careful reader (json-reader.ts: iterative, numbers kept as `LosslessNumber`, repeated keys marked so the
 * record becomes a reject naming the key instead of silently keeping the last value).
 * The scan skips string literals: a regex over the whole text would also match the `:05` of timestamps
 * inside strings and send every page to the slow parser (about a third of a backfill's CPU).
 */
import { LosslessNumber } from 'lossless-json';
import { readJsonCarefully } from './json-reader.js';
import { writeJson } from './json-writer.js';

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

/** What one pass over a JSON text found. */
export interface JsonScan {
  /** A number literal a double would alter. */
  lossless: boolean;
  /** An object that names the same key twice. */
  duplicateKeys: boolean;
}

const SHORT_KEYS = 32;
const OPEN_OBJECT = 123;
const CLOSE_OBJECT = 125;
const OPEN_ARRAY = 91;
const CLOSE_ARRAY = 93;

function isWhitespace(c: number): boolean {
  return c === 32 || c === 10 || c === 13 || c === 9;
}

/** Whether the string literal text[start, end) is followed by a colon (it is an object key). */
function isKey(text: string, end: number): boolean {
  let k = end;
  while (k < text.length && isWhitespace(text.charCodeAt(k))) k++;
  return text.charCodeAt(k) === 58;
}

/**
 * One pass over a JSON text: number literals a double would alter, and objects naming a key twice.
 * Strings are skipped (a timestamp's `:05` is not a number). Iterative; stops early once both are found.
 * On malformed text it answers what it saw: the parser then says what is wrong.
 *
 * It allocates nothing per value (a quarter of the worker's time was garbage collection): a key is
 * remembered as its offset, length and a hash into one list shared by every open object, and compared
 * with the earlier keys of its object character by character only when length and hash agree; a number is
 * judged canonical from its digits (`canonicalByDigits`) and sliced only when that cannot tell. An object
 * with an escaped key or with more than SHORT_KEYS keys is rare: the whole text is then scanned by
 * `scanJsonByKeyStrings`, which compares decoded key strings (the two agree on every JSON text).
 */
export function scanJson(text: string): JsonScan {
  let lossless = false;
  let duplicateKeys = false;
  // per open container: where its keys start in `keys` (-1 for an array)
  const bases: number[] = [];
  // per key of the open objects: offset of its first character, length, hash (3 numbers each)
  const keys: number[] = [];
  const n = text.length;
  for (let i = 0; i < n;) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = skipString(text, i);
      if (end < 0) break;
      const base = bases.length > 0 ? (bases[bases.length - 1] as number) : -1;
      if (base >= 0 && isKey(text, end)) {
        let hash = 0;
        for (let k = i + 1; k < end - 1; k++) {
          const kc = text.charCodeAt(k);
          if (kc === BACKSLASH) return scanJsonByKeyStrings(text);
          hash = (Math.imul(hash, 31) + kc) | 0;
        }
        const start = i + 1;
        const length = end - 1 - start;
        if ((keys.length - base) / 3 >= SHORT_KEYS) return scanJsonByKeyStrings(text);
        if (!duplicateKeys && repeatsKey(text, keys, base, start, length, hash)) duplicateKeys = true;
        keys.push(start, length, hash);
      }
      i = end;
    } else if (c === 45 || (c >= 48 && c <= 57)) {
      let j = i + 1;
      while (j < n && isNumberChar(text.charCodeAt(j))) j++;
      if (!lossless && !canonicalByDigits(text, i, j) && !isCanonicalNumber(text.slice(i, j)))
        lossless = true;
      i = j;
    } else {
      if (c === OPEN_OBJECT) bases.push(keys.length);
      else if (c === OPEN_ARRAY) bases.push(-1);
      else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
        const base = bases.pop();
        if (base !== undefined && base >= 0) keys.length = base;
      }
      i++;
    }
    if (lossless && duplicateKeys) break;
  }
  return { lossless, duplicateKeys };
}

/** Whether the key at text[start, start+length) with `hash` equals one of its object's earlier keys. */
function repeatsKey(
  text: string,
  keys: readonly number[],
  base: number,
  start: number,
  length: number,
  hash: number,
): boolean {
  for (let k = base; k < keys.length; k += 3) {
    if (keys[k + 1] !== length || keys[k + 2] !== hash) continue;
    const other = keys[k] as number;
    let same = true;
    for (let m = 0; m < length && same; m++) same = text.charCodeAt(start + m) === text.charCodeAt(other + m);
    if (same) return true;
  }
  return false;
}

/** Most significant digits that always survive a round trip through a double (DBL_DIG). */
const SAFE_DIGITS = 15;

/**
 * True when the number literal text[start, end) is surely what `String(Number(literal))` gives back,
 * decided from its digits alone; false means "cannot tell here", not "not canonical". Plain decimals only
 * (no exponent), without a leading zero (other than "0." itself), without a trailing zero after the
 * point, with at most 15 significant digits (so the double's shortest form is the literal itself) and
 * no smaller than 1e-6 (below that JavaScript writes an exponent). "-0" becomes "0": not canonical.
 */
export function canonicalByDigits(text: string, start: number, end: number): boolean {
  let i = start;
  if (text.charCodeAt(i) === 45) i++;
  const intStart = i;
  while (i < end && isDigit(text.charCodeAt(i))) i++;
  const intDigits = i - intStart;
  if (intDigits === 0) return false;
  const zeroInteger = text.charCodeAt(intStart) === 48;
  if (zeroInteger && intDigits > 1) return false;
  if (i === end) return !zeroInteger || start === intStart ? intDigits <= SAFE_DIGITS : false;
  if (text.charCodeAt(i) !== 46) return false; // an exponent (or garbage): let the slow check decide
  const fracStart = ++i;
  while (i < end && isDigit(text.charCodeAt(i))) i++;
  const fracDigits = i - fracStart;
  if (i !== end || fracDigits === 0 || text.charCodeAt(end - 1) === 48) return false;
  if (!zeroInteger) return intDigits + fracDigits <= SAFE_DIGITS;
  let leadingZeros = 0;
  while (text.charCodeAt(fracStart + leadingZeros) === 48) leadingZeros++;
  return leadingZeros < 6 && fracDigits - leadingZeros <= SAFE_DIGITS;
}

const isDigit = (c: number): boolean => c >= 48 && c <= 57;

/**
 * The same scan comparing decoded key strings: slower, and used only for the rare texts `scanJson`
 * hands over (an escaped key such as "\u0061", or an object of more than SHORT_KEYS keys).
 */
export function scanJsonByKeyStrings(text: string): JsonScan {
  const found: JsonScan = { lossless: false, duplicateKeys: false };
  // per open container: the keys of an object so far (null for an array); a short list is cheaper than a
  // Set for the handful of keys a record has, and becomes a Set past SHORT_KEYS (no quadratic cost)
  const keys: (string[] | Set<string> | null)[] = [];
  for (let i = 0; i < text.length;) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = skipString(text, i);
      if (end < 0) return found;
      const top = keys[keys.length - 1];
      if (top && isKey(text, end)) {
        let key = text.slice(i, end);
        if (key.includes('\\')) key = JSON.stringify(safeParse(key) ?? key); // "\u0061" is "a"
        if (Array.isArray(top)) {
          if (top.includes(key)) found.duplicateKeys = true;
          top.push(key);
          if (top.length > SHORT_KEYS) keys[keys.length - 1] = new Set(top);
        } else {
          if (top.has(key)) found.duplicateKeys = true;
          top.add(key);
        }
      }
      i = end;
    } else if (c === 45 || (c >= 48 && c <= 57)) {
      let j = i + 1;
      while (j < text.length && isNumberChar(text.charCodeAt(j))) j++;
      if (!isCanonicalNumber(text.slice(i, j))) found.lossless = true;
      i = j;
    } else {
      if (c === OPEN_OBJECT) keys.push([]);
      else if (c === OPEN_ARRAY) keys.push(null);
      else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) keys.pop();
      i++;
    }
    if (found.lossless && found.duplicateKeys) return found;
  }
  return found;
}

function safeParse(literal: string): unknown {
  try {
    return JSON.parse(literal);
  } catch {
    return undefined;
  }
}

/** Whether a JSON text holds a number literal a double would alter. */
export function needsLosslessParse(text: string): boolean {
  return scanJson(text).lossless;
}

/**
 * Parses JSON text; numbers a double would alter come back as `LosslessNumber`, and an object that
 * repeats a key is marked (json-reader.ts `DUPLICATE_KEYS`) instead of silently keeping one value.
 * The common page (canonical numbers, unique keys) stays on the native parser. Throws SyntaxError.
 */
export function parseExactJson(text: string): unknown {
  const scan = scanJson(text);
  if (!scan.lossless && !scan.duplicateKeys) return JSON.parse(text);
  return readJsonCarefully(text);
}

export function isLosslessNumber(value: unknown): value is LosslessNumber {
  return value instanceof LosslessNumber;
}

/** The exact decimal text of a parsed JSON number. */
export function decimalText(value: number | LosslessNumber): string {
  return typeof value === 'number' ? String(value) : value.toString();
}

/** Serialises a parsed value back to JSON text, keeping every number exactly as it was sent. Iterative. */
export function toExactJson(value: unknown): string {
  return writeJson(value) as string;
}

export { LosslessNumber };
