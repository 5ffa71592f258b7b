/**
 * Pure preparation of one page before it reaches Postgres:
 * - ids are made unique (ON CONFLICT cannot touch a row twice in one statement): the latest updatedAt
 *   wins; different copies with the same updatedAt are all quarantined (none can be trusted);
 * - records Postgres could not store exactly (a NUL character, a lone UTF-16 surrogate) become rejects
 *   with the reason, instead of failing the whole page on every retry;
 * - rejects get their raw forms: JSONB when possible, text otherwise (only its first MAX_RAW_CHARS
 *   characters for a huge record, with the full size and SHA-256), deduplicated by that hash.
 */
import { createHash } from 'node:crypto';
import type { RejectedRecord } from '../upstream/schemas.js';
import { toExactJson } from '../upstream/exact-json.js';
import { writeJson } from '../upstream/json-writer.js';
import { rawRecordProblem } from '../upstream/record-limits.js';
import { containsSecret, replaceSecrets } from '../scrub.js';
import { jsonWithoutSecrets } from './echoed-key.js';
import type { Row } from './stream-tables.js';

interface Versioned {
  id: string;
  updatedAt: string;
}

export interface Deduplicated<T> {
  records: T[];
  /**
   * Copies of one id sent with the same updatedAt and different content: which one is true cannot be
   * known, so every such copy is quarantined (a silently chosen amount is worse than a reject).
   */
  conflicting: RejectedRecord[];
}

/** One record per id, sorted by id (a stable lock order for concurrent loads); the latest updatedAt wins. */
export function deduplicate<T extends Versioned>(records: readonly T[]): Deduplicated<T> {
  const byId = new Map<string, T[]>();
  for (const record of records) {
    const seen = byId.get(record.id);
    if (seen === undefined) {
      byId.set(record.id, [record]);
      continue;
    }
    const newest = Date.parse((seen[0] as T).updatedAt);
    const t = Date.parse(record.updatedAt);
    if (t > newest) byId.set(record.id, [record]);
    else if (t === newest) seen.push(record);
  }
  const unique: T[] = [];
  const conflicting: RejectedRecord[] = [];
  for (const [id, copies] of byId) {
    if (copies.length === 1) {
      unique.push(copies[0] as T); // the usual case: nothing to compare, so nothing serialised
      continue;
    }
    const distinct = new Map(copies.map((c) => [toExactJson(c), c]));
    if (distinct.size === 1) unique.push(copies[0] as T);
    else {
      const reason =
        `id sent ${copies.length} times on one page with the same updatedAt and different contents ` +
        `(${differingFields(copies).join(', ')}); which copy is true cannot be known`;
      for (const copy of distinct.values()) conflicting.push({ raw: copy, reason, id });
    }
  }
  unique.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { records: unique, conflicting };
}

function differingFields(copies: readonly object[]): string[] {
  const first = copies[0] as Record<string, unknown>;
  const names = Object.keys(first).filter((k) =>
    copies.some((c) => toExactJson((c as Record<string, unknown>)[k]) !== toExactJson(first[k])),
  );
  return names.length > 0 ? names : ['fields'];
}

// eslint-disable-next-line no-control-regex -- NUL is exactly what is looked for
const NUL = /\u0000/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
/** JSONB refuses the \u0000 escape and unpaired surrogate escapes that JSON.stringify emits. */
const JSONB_REFUSED_ESCAPE = /\\u0000|\\u[dD][89a-fA-F][0-9a-fA-F]{2}/;

/**
 * Why Postgres cannot store this row exactly, or null when it can. `writtenIndex` is a column whose text
 * paysync wrote itself with JSON.stringify (unknown_fields: record-shape.ts, and echoed-key.ts when it
 * scrubs one), which writes a NUL or a lone surrogate as a `\u` escape, never raw: it is not looked
 * through. (A record holding either, raw, was refused before: record-limits.ts.)
 */
export function unstorableReason(row: Row, jsonIndex: number, writtenIndex = -1): string | null {
  for (let i = 0; i < row.length; i++) {
    const value = row[i];
    if (value === null || value === undefined || i === writtenIndex) continue;
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
  /** SHA-256 of the whole raw text, also when only its start is stored. */
  rawHash: string;
  /** Size of the whole raw text in UTF-8 bytes. */
  rawBytes: number;
  truncated: boolean;
  reason: string;
}

/** Most characters of a reject's raw text kept in sync_rejects (a 50 MB record keeps its first 64 KiB). */
export const MAX_RAW_CHARS = 64 * 1024;
const MAX_REASON_CHARS = 2_000;

const clean = (text: string): string => text.replace(/\u0000/g, '\\u0000'); // eslint-disable-line no-control-regex

function serialise(raw: unknown): string {
  try {
    return writeJson(raw) ?? String(raw);
  } catch {
    return String(raw); // a value no JSON can hold (a cycle): its text, at least
  }
}

/** A reject's raw JSON text, with every form of a registered key replaced (echoed-key.ts). */
function serialisedWithoutSecrets(raw: unknown): string {
  const json = serialise(raw);
  if (!containsSecret(json)) return json;
  try {
    return jsonWithoutSecrets(raw);
  } catch {
    return replaceSecrets(json);
  }
}

/**
 * The columns of one reject: JSONB when PostgreSQL can hold it whole, otherwise (the start of) its text.
 * No form of a registered key is kept in any of them.
 */
export function rejectRow(reject: RejectedRecord): RejectRow {
  const json = serialisedWithoutSecrets(reject.raw);
  const rawBytes = Buffer.byteLength(json, 'utf8');
  const rawHash = createHash('sha256').update(json).digest('hex');
  const finding = rawRecordProblem(reject.raw);
  const storableJson =
    json.length <= MAX_RAW_CHARS &&
    (finding === null || finding.storableAsJsonb) &&
    !JSONB_REFUSED_ESCAPE.test(json) &&
    !NUL.test(json);
  const truncated = !storableJson && json.length > MAX_RAW_CHARS;
  const text = truncated ? wholeChars(json, MAX_RAW_CHARS) : json;
  const reason = clean(replaceSecrets(reject.reason));
  return {
    recordId: reject.id === null ? null : clean(replaceSecrets(reject.id)),
    rawJson: storableJson ? json : null,
    rawText: storableJson ? null : clean(LONE.test(text) ? text.replace(LONE_ALL, '\uFFFD') : text),
    rawHash,
    rawBytes,
    truncated,
    reason: reason.length > MAX_REASON_CHARS ? `${reason.slice(0, MAX_REASON_CHARS)}…` : reason,
  };
}

const LONE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LONE_ALL = new RegExp(LONE.source, 'g');

/** The first `n` characters, not cutting a surrogate pair in two. */
function wholeChars(text: string, n: number): string {
  const code = text.charCodeAt(n - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? n - 1 : n);
}

/** One row per distinct raw (the same bad record twice on a page is one reject, seen once more). */
export function uniqueRejects(rows: readonly RejectRow[]): RejectRow[] {
  const byHash = new Map<string, RejectRow>();
  for (const row of rows) if (!byHash.has(row.rawHash)) byHash.set(row.rawHash, row);
  return [...byHash.values()];
}
