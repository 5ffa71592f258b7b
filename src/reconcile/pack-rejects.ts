/**
 * The pack's two files about records that are not (or not alike) in the warehouse:
 * - `rejects.csv`: the day's quarantined records (open sync_rejects), so finance can chase each one with
 *   the provider: those whose raw createdAt falls in the day, and those the day's latest reconcile found
 *   the service listing for the day (a record with an unreadable createdAt can be placed no other way).
 * - `differences.csv`: the records behind the day's latest reconcile's unexplained differences (missing
 *   in the warehouse or at the source, status or amount different), written only when there are any.
 * Every cell that is text from the service is neutralised against formula injection (csv-cells.ts).
 */
import { join } from 'node:path';
import type { PoolClient } from 'pg';
import { neutralise } from './csv-cells.js';
import { utcIsoSql } from './pack-query.js';
import { writeSmallCsv, type WrittenFile } from './pack-writer.js';

export const REJECTS_HEADER = ['id', 'reference', 'stream', 'source', 'reason', 'first_seen', 'raw'] as const;

/**
 * The createdAt text a reject was sent with: from its JSON object, or found in the raw text of a record
 * that was not even JSON. `r` is a reporting.sync_rejects row.
 */
const CREATED_TEXT = `coalesce(CASE WHEN jsonb_typeof(r.raw) = 'object' THEN r.raw->>'createdAt' END,
                          substring(r.raw_text from '"createdAt"\\s*:\\s*"([^"]{1,64})"'))`;

/**
 * The day's quarantined records, the one selection both rejects.csv and the workbook's rejects sheet
 * read (so the two list the same records): open rejects whose createdAt text is an instant inside the
 * day (no offset: UTC, as the service writes it), and those the day's latest reconcile found the service
 * listing for the day (a record with an unreadable createdAt can be placed no other way).
 * Selects `r.*` plus `reference` and `created_text`; $1, $2: the day's instant range; $3: the day.
 */
export const DAY_REJECTS_FROM = `
  (SELECT r.*, CASE WHEN jsonb_typeof(r.raw) = 'object' AND jsonb_typeof(r.raw->'reference') = 'string'
                    THEN r.raw->>'reference' END AS reference,
          ${CREATED_TEXT} AS created_text
     FROM reporting.sync_rejects r
    WHERE r.resolved_at IS NULL) r
  CROSS JOIN LATERAL (
    SELECT reporting.try_timestamptz(CASE WHEN r.created_text ~ '(Z|[+-]\\d{2}:?\\d{2})$' THEN r.created_text
                                          ELSE r.created_text || 'Z' END) AS created_at) sent
  WHERE (sent.created_at >= $1 AND sent.created_at < $2)
     OR EXISTS (SELECT 1 FROM reporting.reconcile_records q
                 WHERE q.kind = 'quarantined' AND q.record_id IS NOT NULL
                   AND q.source = r.source AND q.stream = r.stream AND q.record_id = r.record_id
                   AND q.run_id = (SELECT run_id FROM reporting.reconcile_results WHERE day = $3::date
                                    ORDER BY checked_at DESC LIMIT 1))`;

/** Their order in both files. */
export const DAY_REJECTS_ORDER = `r.stream, r.source COLLATE "C", r.record_id COLLATE "C" NULLS LAST, r.reject_id`;

const REJECTS_SQL = `
  SELECT r.record_id, r.reference, r.stream, r.source, r.reason,
         ${utcIsoSql('r.first_seen_at')}, coalesce(r.raw::text, r.raw_text)
    FROM ${DAY_REJECTS_FROM}
   ORDER BY ${DAY_REJECTS_ORDER}`;

/** JSON text without the spaces PostgreSQL prints after `:` and `,` (strings untouched, numbers exact). */
export function compactJson(text: string): string {
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (inString) {
      out += c;
      if (c === '\\') out += text[++i] ?? '';
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
      out += c;
    } else if (c !== ' ' && c !== '\n' && c !== '\t' && c !== '\r') out += c;
  }
  return out;
}

export interface RejectsFile {
  file: WrittenFile;
  counts: { payments: number; transfers: number };
}

export async function writeRejects(
  client: PoolClient,
  range: [Date, Date],
  day: string,
  dir: string,
): Promise<RejectsFile> {
  const { rows } = await client.query<unknown[]>({
    text: REJECTS_SQL,
    values: [...range, day],
    rowMode: 'array',
  });
  const counts = { payments: 0, transfers: 0 };
  const cells = rows.map((r) => {
    const [id, reference, stream, source, reason, firstSeen, raw] = (r as Array<string | null>).map(
      (c) => c ?? null,
    );
    if (stream === 'payments' || stream === 'transfers') counts[stream] += 1;
    const jsonRaw =
      raw !== null && raw !== undefined && (raw.startsWith('{') || raw.startsWith('['))
        ? safeCompact(raw)
        : raw;
    return [id, reference, stream, source, reason, firstSeen, jsonRaw].map((c) => neutralise(c ?? null));
  });
  const file = await writeSmallCsv(cells, REJECTS_HEADER, join(dir, 'rejects.csv'));
  return { file, counts };
}

/** raw_text may hold text that is not JSON at all: compacting it could change it, so only JSON is. */
function safeCompact(raw: string): string {
  try {
    JSON.parse(raw);
    return compactJson(raw);
  } catch {
    return raw;
  }
}

export const DIFFERENCES_HEADER = [
  'source',
  'stream',
  'id',
  'difference',
  'warehouse_status',
  'service_status',
  'warehouse_amount',
  'service_amount',
] as const;

const DIFFERENCES_SQL = `
  SELECT source, stream, record_id, kind, warehouse_status, service_status,
         warehouse_amount::text, service_amount::text
    FROM reporting.reconcile_records
   WHERE kind <> 'quarantined'
     AND run_id = (SELECT run_id FROM reporting.reconcile_results WHERE day = $1::date
                    ORDER BY checked_at DESC LIMIT 1)
   ORDER BY source COLLATE "C", stream, kind, record_id COLLATE "C"`;

/** differences.csv, or null when the day's latest reconcile named no unexplained record. */
export async function writeDifferences(
  client: PoolClient,
  day: string,
  dir: string,
): Promise<WrittenFile | null> {
  const { rows } = await client.query<unknown[]>({ text: DIFFERENCES_SQL, values: [day], rowMode: 'array' });
  if (rows.length === 0) return null;
  const cells = rows.map((r) => (r as Array<string | null>).map((c) => neutralise(c ?? null)));
  return writeSmallCsv(cells, DIFFERENCES_HEADER, join(dir, 'differences.csv'));
}
