/**
 * What the warehouse columns can take, checked on a record the schema accepted, before any statement
 * runs. Each of these, left to PostgreSQL, fails the whole page on every retry (its message in brackets):
 * - amounts beyond NUMERIC or absurd for money ("value overflows numeric format" for `1e200000`);
 * - timestamps PostgreSQL refuses or that no sync can place: a year before 1970 or after 9999
 *   (`0000-01-01`: "date/time field value out of range"), an offset beyond ±14:00, the largest any
 *   zone uses (`+16:00` is refused);
 * - ids and references too long for their btree index ("index row requires 9024 bytes"): the limit is
 *   about 2,700 bytes; MAX_KEY_BYTES stays well under it, also for two-column indexes.
 */
import { AMOUNT_LIMITS, decimalProblem } from './decimal-limits.js';

export const MAX_KEY_BYTES = 512;
export const MIN_YEAR = 1970;
export const MAX_YEAR = 9999;
const MAX_OFFSET_MINUTES = 14 * 60;

const OFFSET = /([+-])(\d{2}):?(\d{2})$/;

/** Why PostgreSQL (or paysync's windows) cannot take this timestamp, or null. The schema checked its form. */
export function timestampProblem(text: string): string | null {
  const year = Number(text.slice(0, 4));
  if (!(year >= MIN_YEAR && year <= MAX_YEAR))
    return `year ${text.slice(0, 4)} is outside ${MIN_YEAR}-${MAX_YEAR}`;
  // UTC from 1970 on, in a form the schema proved a real date: nothing below can object (the common case)
  if (text.charCodeAt(text.length - 1) === 90 /* Z */) return null;
  const offset = OFFSET.exec(text);
  if (offset) {
    const minutes = Number(offset[2]) * 60 + Number(offset[3]);
    if (minutes > MAX_OFFSET_MINUTES || Number(offset[3]) >= 60)
      return `offset ${offset[0]} is beyond ±14:00 (no time zone uses it; PostgreSQL refuses from ±16:00)`;
  }
  const ms = Date.parse(text);
  if (!Number.isFinite(ms) || ms < 0) return `${text} is not a time paysync can place (before 1970 UTC)`;
  return null;
}

function keyProblem(value: string | null): string | null {
  // UTF-8 takes at most 3 bytes per UTF-16 unit: most keys need no count
  if (value === null || value.length <= MAX_KEY_BYTES / 3) return null;
  const bytes = Buffer.byteLength(value, 'utf8');
  return bytes > MAX_KEY_BYTES ? `is ${bytes} bytes long (at most ${MAX_KEY_BYTES}: it is indexed)` : null;
}

export interface StorableFields {
  amount: string;
  createdAt: string;
  updatedAt: string;
  /** Indexed text columns, by field name. */
  keys: Record<string, string | null>;
}

/** The first field PostgreSQL would refuse, as "field: why", or null. Pure. */
export function storableProblem(fields: StorableFields): string | null {
  const amount = decimalProblem(fields.amount, AMOUNT_LIMITS);
  if (amount) return `amount ${amount}`;
  for (const name of ['createdAt', 'updatedAt'] as const) {
    const problem = timestampProblem(fields[name]);
    if (problem) return `${name}: ${problem}`;
  }
  for (const name in fields.keys) {
    const problem = keyProblem(fields.keys[name] ?? null);
    if (problem) return `${name} ${problem}`;
  }
  return null;
}
