/**
 * reporting.field_sightings (sql/021): each change in the shape of the service's records, one row per
 * stream, field and change, announced until someone acknowledges it. Fields the interface does not list
 * (`added`) are counted by triggers as records land; this file records the listed fields that records
 * lacked or sent with another JSON type (`missing`, `retyped`: the records themselves are quarantined),
 * lists the sightings and acknowledges them.
 */
import type pg from 'pg';
import type { FieldChange } from '../upstream/record-shape.js';
import type { RejectedRecord } from '../upstream/schemas.js';
import { jsonWithoutSecrets } from './echoed-key.js';
import type { RejectRow } from './page-prep.js';

export type SightingChange = 'added' | FieldChange;

export interface FieldSighting {
  stream: string;
  field: string;
  change: SightingChange;
  firstSeenAt: Date;
  lastSeenAt: Date;
  firstSource: string;
  /** added: stored records carrying it now; missing, retyped: distinct quarantined copies. */
  records: number;
  /** A value as stored or received (JSON text, key-scrubbed, at most EXAMPLE_CHARS), or null. */
  example: string | null;
  /** missing, retyped: what the interface gives the field and what came. */
  detail: string | null;
  acknowledgedAt: Date | null;
  acknowledgedBy: string | null;
}

/** Longest example kept (the rest of the value is in the record's row or its reject). */
export const EXAMPLE_CHARS = 200;

interface DriftEntry {
  field: string;
  change: FieldChange;
  example: string | null;
  detail: string;
  hashes: string[];
}

/** The page's drift, one entry per field and change, with the raw hashes of the rejects showing it. */
export function driftEntries(rejects: readonly RejectedRecord[], rows: readonly RejectRow[]): DriftEntry[] {
  const entries = new Map<string, DriftEntry>();
  rejects.forEach((reject, i) => {
    for (const d of reject.drift ?? []) {
      const key = `${d.field}\u0000${d.change}`;
      let entry = entries.get(key);
      if (!entry) {
        const example = d.change === 'retyped' ? jsonWithoutSecrets(d.value).slice(0, EXAMPLE_CHARS) : null;
        entry = { field: d.field, change: d.change, example, detail: d.detail, hashes: [] };
        entries.set(key, entry);
      }
      const hash = rows[i]?.rawHash;
      if (hash !== undefined) entry.hashes.push(hash);
    }
  });
  return [...entries.values()];
}

/**
 * Records the page's drift after its statement committed. `records` grows by the rejects this page
 * stored first (times_seen 1 once the page's statement has counted every copy it held): a quarantined
 * record read again is not counted again. Returns the sightings this call created (first seen now).
 */
export async function recordFieldDrift(
  pool: pg.Pool,
  source: string,
  stream: string,
  entries: readonly DriftEntry[],
): Promise<Array<{ field: string; change: FieldChange }>> {
  if (entries.length === 0) return [];
  const { rows } = await pool.query<{ field: string; change: FieldChange; created: boolean }>(
    `INSERT INTO reporting.field_sightings AS f (stream, field, change, first_source, records, example, detail)
     SELECT $2::text, d.field, d.change, $1::text,
            (SELECT count(*) FROM reporting.sync_rejects r
              WHERE r.source = $1::text AND r.stream = $2::text AND r.raw_hash = ANY(d.hashes)
                AND r.times_seen = 1),
            d.example, d.detail
       FROM jsonb_to_recordset($3::jsonb) AS d(field text, change text, example text, detail text, hashes text[])
      ORDER BY d.field, d.change
     ON CONFLICT (stream, field, change) DO UPDATE
       SET records = f.records + EXCLUDED.records, last_seen_at = now(), detail = EXCLUDED.detail
     RETURNING f.field, f.change, f.xmax = 0 AS created`,
    [source, stream, JSON.stringify(entries)],
  );
  return rows.filter((r) => r.created).map(({ field, change }) => ({ field, change }));
}

interface SightingRow {
  stream: string;
  field: string;
  change: SightingChange;
  first_seen_at: Date;
  last_seen_at: Date;
  first_source: string;
  records: string;
  example: string | null;
  detail: string | null;
  acknowledged_at: Date | null;
  acknowledged_by: string | null;
}

const toSighting = (r: SightingRow): FieldSighting => ({
  stream: r.stream,
  field: r.field,
  change: r.change,
  firstSeenAt: r.first_seen_at,
  lastSeenAt: r.last_seen_at,
  firstSource: r.first_source,
  records: Number(r.records),
  example: r.example,
  detail: r.detail,
  acknowledgedAt: r.acknowledged_at,
  acknowledgedBy: r.acknowledged_by,
});

export interface SightingList {
  /** How many sightings there are (of those asked for). */
  total: number;
  /** The first `limit` of them, oldest first. */
  sightings: FieldSighting[];
}

/**
 * The sightings, oldest first: those still to acknowledge, or all; at most `limit` (a service that invents
 * a field name per record must not make a status page of a million lines), with how many there are. A
 * warehouse migrated before sql/021 has none (rather than failing the status that asks).
 */
export async function listFieldSightings(
  pool: Pick<pg.Pool, 'query'>,
  options: { unacknowledgedOnly?: boolean; limit?: number } = {},
): Promise<SightingList> {
  const present = await pool.query<{ ok: boolean }>(
    `SELECT to_regclass('reporting.field_sightings') IS NOT NULL AS ok`,
  );
  if (present.rows[0]?.ok !== true) return { total: 0, sightings: [] };
  const { rows } = await pool.query<SightingRow & { total: string }>(
    `SELECT stream, field, change, first_seen_at, last_seen_at, first_source, records, example, detail,
            acknowledged_at, acknowledged_by, count(*) OVER () AS total
       FROM reporting.field_sightings
      WHERE NOT $1::boolean OR acknowledged_at IS NULL
      ORDER BY first_seen_at, stream, field, change
      LIMIT $2`,
    [options.unacknowledgedOnly === true, options.limit ?? null],
  );
  return { total: Number(rows[0]?.total ?? 0), sightings: rows.map(toSighting) };
}

/** How many sightings are not acknowledged yet, per stream and change (the metric's values). */
export async function unacknowledgedCounts(
  pool: Pick<pg.Pool, 'query'>,
): Promise<Array<{ stream: string; change: SightingChange; count: number }>> {
  const present = await pool.query<{ ok: boolean }>(
    `SELECT to_regclass('reporting.field_sightings') IS NOT NULL AS ok`,
  );
  if (present.rows[0]?.ok !== true) return [];
  const { rows } = await pool.query<{ stream: string; change: SightingChange; count: number }>(
    `SELECT stream, change, count(*)::int AS count FROM reporting.field_sightings
      WHERE acknowledged_at IS NULL GROUP BY 1, 2 ORDER BY 1, 2`,
  );
  return rows;
}

/** Acknowledges every unacknowledged sighting of `field` (on `stream` only, if given): the ones it acknowledged. */
export async function acknowledgeField(
  pool: Pick<pg.Pool, 'query'>,
  field: string,
  by: string,
  stream?: string,
): Promise<FieldSighting[]> {
  const { rows } = await pool.query<SightingRow>(
    `UPDATE reporting.field_sightings SET acknowledged_at = now(), acknowledged_by = $2
      WHERE field = $1 AND acknowledged_at IS NULL AND ($3::text IS NULL OR stream = $3::text)
      RETURNING stream, field, change, first_seen_at, last_seen_at, first_source, records, example, detail,
                acknowledged_at, acknowledged_by`,
    [field, by, stream ?? null],
  );
  return rows.map(toSighting).sort((a, b) => a.firstSeenAt.getTime() - b.firstSeenAt.getTime());
}
