/**
 * Pure preparation of one page before it reaches Postgres:
 * - ids are made unique (ON CONFLICT cannot touch a row twice in one statement): the latest updatedAt
 *   wins; two different copies with the same updatedAt keep the one whose exact JSON sorts last, so
 *   the choice never depends on the order the service listed them in (counted as a conflict);
 * - records Postgres could not store exactly (a NUL character, a lone UTF-16 surrogate) become rejects
 *   with the reason, instead of failing the whole page on every retry;
 * - rejects get their raw forms: JSONB when possible, text otherwise, and a hash that identifies them.
 */
import { createHash } from 'node:crypto';
import type { RejectedRecord } from '../upstream/schemas.js';
import { toExactJson } from '../upstream/exact-json.js';
import type { Row } from './stream-tables.js';

interface Versioned {
  id: string;
  updatedAt: string;
}

export interface Deduplicated<T> {
  records: T[];
  /** Ids that came twice with the same updatedAt and different content. */
  conflicts: string[];
}

function preferred<T extends Versioned>(a: T, b: T): { keep: T; conflict: boolean } {
  const ta = Date.parse(a.updatedAt);
  const tb = Date.parse(b.updatedAt);
  if (ta !== tb) return { keep: tb > ta ? b : a, conflict: false };
  const ja = toExactJson(a);
  const jb = toExactJson(b);
  if (ja === jb) return { keep: a, conflict: false };
  return { keep: jb > ja ? b : a, conflict: true };
}

/** One record per id, sorted by id (a stable lock order for concurrent loads). */
export function deduplicate<T extends Versioned>(records: readonly T[]): Deduplicated<T> {
  const byId = new Map<string, T>();
  const conflicts = new Set<string>();
  for (const record of records) {
    const seen = byId.get(record.id);
    if (seen === undefined) {
      byId.set(record.id, record);
      continue;
    }
    const { keep, conflict } = preferred(seen, record);
    byId.set(record.id, keep);
    if (conflict) conflicts.add(record.id);
  }
  const unique = [...byId.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { records: unique, conflicts: [...conflicts] };
}

// eslint-disable-next-line no-control-regex -- NUL is exactly what is looked for
const NUL = /\u0000/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** JSONB refuses the \u0000 escape and unpaired surrogate escapes that JSON.stringify emits. */
const JSONB_REFUSED_ESCAPE = /\\u0000|\\u[dD][89a-fA-F][0-9a-fA-F]{2}/;

/** Why Postgres cannot store this row exactly, or null when it can. */
export function unstorableReason(row: Row, jsonIndex: number): string | null {
  for (let i = 0; i < row.length; i++) {
    const value = row[i];
    if (value === null || value === undefined) continue;
    if (NUL.test(value)) return 'contains a NUL character, which PostgreSQL text cannot hold';
    if (LONE_SURROGATE.test(value)) return 'contains an unpaired UTF-16 surrogate (not valid Unicode)';
    if (i === jsonIndex && JSONB_REFUSED_ESCAPE.test(value)) {
      return 'extra_data contains \\u0000 or an unpaired surrogate escape, which JSONB cannot hold';
    }
  }
  return null;
}

export interface RejectRow {
  recordId: string | null;
  rawJson: string | null;
  rawText: string | null;
  rawHash: string;
  reason: string;
}

const clean = (text: string): string => text.replace(/\u0000/g, '\\u0000'); // eslint-disable-line no-control-regex

function serialise(raw: unknown): string | undefined {
  try {
    return toExactJson(raw);
  } catch {
    return undefined; // BigInt, cycles: fall back to text
  }
}

export function rejectRow(reject: RejectedRecord): RejectRow {
  const json = serialise(reject.raw);
  const storableJson = json !== undefined && !JSONB_REFUSED_ESCAPE.test(json) && !NUL.test(json);
  const rawText = storableJson ? null : clean(json ?? String(reject.raw));
  const rawJson = storableJson ? json : null;
  return {
    recordId: reject.id === null ? null : clean(reject.id),
    rawJson,
    rawText,
    rawHash: createHash('sha256')
      .update(rawJson ?? rawText ?? '')
      .digest('hex'),
    reason: clean(reject.reason),
  };
}
