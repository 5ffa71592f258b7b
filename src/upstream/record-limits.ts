/**
 * Limits on one record as the service sent it, checked before the schema and before anything recurses
 * over it. A record that breaks one is quarantined with the reason; its neighbours are not affected.
 *
 * - Depth: at most MAX_DEPTH levels (the record itself is level 1). PostgreSQL's JSONB parser, JSON.stringify
 *   and every recursive helper have a stack; a record 5,000 levels deep would fail its whole page with
 *   "Maximum call stack size exceeded". The walk here is iterative, so any depth is measured safely.
 * - Size: at most MAX_VALUES values and MAX_TEXT_CHARS characters of keys and strings.
 * - A key named twice in one object (json-reader.ts marks it): which value the service meant cannot be
 *   known, and a silently chosen amount is worse than a quarantined record.
 * - Text PostgreSQL cannot hold exactly: a NUL character, an unpaired UTF-16 surrogate.
 * - Numbers JSONB cannot hold (beyond NUMERIC's range, e.g. `1e200000`).
 */
import { LosslessNumber } from 'lossless-json';
import { duplicateKeysOf } from './json-reader.js';
import { decimalProblem } from './decimal-limits.js';

export const MAX_DEPTH = 32;
export const MAX_VALUES = 10_000;
export const MAX_TEXT_CHARS = 1_000_000;

export interface RawFinding {
  reason: string;
  /** False when the raw record cannot be stored as JSONB (it is kept as text instead). */
  storableAsJsonb: boolean;
}

// eslint-disable-next-line no-control-regex -- NUL is exactly what is looked for
const NUL = /\u0000/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Limits on numbers inside JSON (not amounts): roughly PostgreSQL NUMERIC's own input limits. */
const JSON_NUMBER_LIMITS = { integerDigits: 1000, scale: 1000 };

const clipName = (name: string): string =>
  name.length > 80 ? `${JSON.stringify(name.slice(0, 80))}…` : JSON.stringify(name);

function textProblem(text: string, where: string): string | null {
  if (NUL.test(text)) return `contains a NUL character${where}, which PostgreSQL text cannot hold`;
  if (LONE_SURROGATE.test(text))
    return `contains an unpaired UTF-16 surrogate${where} (not valid Unicode; PostgreSQL cannot store it)`;
  return null;
}

const at = (path: string): string => (path ? ` (at ${path})` : '');

/** One value still to visit; the path is built only when a problem is found (most records have none). */
interface Visit {
  value: unknown;
  depth: number;
  key: string | null;
  parent: Visit | null;
}

function pathOf(visit: Visit): string {
  const keys: string[] = [];
  for (let v: Visit | null = visit; v && v.key !== null; v = v.parent) keys.push(v.key.slice(0, 40));
  const path = keys.reverse();
  return path.length > 6 ? `${path.slice(0, 6).join('.')}…` : path.join('.');
}

/** A quick test first: most strings hold neither NUL nor any surrogate. */
// eslint-disable-next-line no-control-regex -- NUL is exactly what is looked for
const SUSPECT = /[\u0000\uD800-\uDFFF]/;

export function rawRecordProblem(raw: unknown): RawFinding | null {
  const stack: Visit[] = [{ value: raw, depth: 1, key: null, parent: null }];
  let values = 0;
  let chars = 0;
  let duplicate: string | null = null;
  const unsafe = (reason: string): RawFinding => ({ reason, storableAsJsonb: false });
  while (stack.length > 0) {
    const visit = stack.pop() as Visit;
    const { value, depth } = visit;
    if (++values > MAX_VALUES) return unsafe(`too large: more than ${MAX_VALUES} values in one record`);
    if (typeof value === 'string') {
      chars += value.length;
      const problem = SUSPECT.test(value) ? textProblem(value, at(pathOf(visit))) : null;
      if (problem) return unsafe(problem);
    } else if (value instanceof LosslessNumber) {
      const problem = decimalProblem(value.toString(), JSON_NUMBER_LIMITS);
      if (problem) return unsafe(`a number${at(pathOf(visit))} ${problem}`);
    } else if (value !== null && typeof value === 'object') {
      if (depth > MAX_DEPTH)
        return unsafe(
          `nested more than ${MAX_DEPTH} levels deep${at(pathOf(visit))}: too deep to store or query`,
        );
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++)
          stack.push({ value: value[i], depth: depth + 1, key: String(i), parent: visit });
      } else {
        const repeated = duplicateKeysOf(value);
        if (duplicate === null && repeated.length > 0) {
          const name = repeated[0] as string;
          duplicate =
            `duplicate key ${clipName(name)}${at(pathOf(visit))}: the service sent it more than once, ` +
            'so which value it meant cannot be known';
        }
        for (const key of Object.keys(value)) {
          chars += key.length;
          const problem = SUSPECT.test(key) ? textProblem(key, ` in a key${at(pathOf(visit))}`) : null;
          if (problem) return unsafe(problem);
          stack.push({
            value: (value as Record<string, unknown>)[key],
            depth: depth + 1,
            key,
            parent: visit,
          });
        }
      }
    }
    if (chars > MAX_TEXT_CHARS)
      return unsafe(`too large: more than ${MAX_TEXT_CHARS} characters of text in one record`);
  }
  return duplicate === null ? null : { reason: duplicate, storableAsJsonb: true };
}

/** Running totals of the walk in `withinLimits` (module state: the walk is synchronous and not re-entered). */
let seenValues = 0;
let seenChars = 0;

function plainValue(value: unknown, depth: number): boolean {
  if (++seenValues > MAX_VALUES) return false;
  if (typeof value === 'string') {
    seenChars += value.length;
    return !SUSPECT.test(value);
  }
  if (value === null || typeof value !== 'object') return true;
  if (value instanceof LosslessNumber || depth > MAX_DEPTH) return false;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!plainValue(value[i], depth + 1)) return false;
    return seenChars <= MAX_TEXT_CHARS;
  }
  if (duplicateKeysOf(value).length > 0) return false;
  for (const key of Object.keys(value)) {
    seenChars += key.length;
    if (SUSPECT.test(key) || !plainValue((value as Record<string, unknown>)[key], depth + 1)) return false;
  }
  return seenChars <= MAX_TEXT_CHARS;
}

/**
 * True only when `rawRecordProblem(raw)` is null, found without building a visit or a path per value (the
 * full walk allocated one object per value of every record). False means "look closer": a limit passed,
 * suspect text, a duplicate key, or any LosslessNumber (whose range the full walk judges). Its recursion
 * stops at MAX_DEPTH + 1 levels, so a hostile depth costs no stack.
 */
export function withinLimits(raw: unknown): boolean {
  seenValues = 0;
  seenChars = 0;
  return plainValue(raw, 1) && seenChars <= MAX_TEXT_CHARS;
}
