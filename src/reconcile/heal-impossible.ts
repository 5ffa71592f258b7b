/**
 * Healing rows an earlier paysync stored with a time no record can have (later than the clock plus
 * FUTURE_TOLERANCE, or before 2000-01-01; src/sync/record-times.ts). Such a row refuses the service's
 * true state for ever: the forward-only upsert never lets an older `updatedAt` overwrite a newer one.
 * `reconcile --heal` (and the daily job) moves the day's such rows into `sync_rejects`, as the warehouse
 * held them and with the reason, then reads the day again: the service's copy lands (or, if it still
 * sends an impossible time, is quarantined as any read now does). Rows whose `createdAt` itself is
 * impossible belong to no day: any heal moves them.
 */
import type { Pool } from 'pg';
import { EARLIEST_RECORD_MS, IMPOSSIBLE_TIME_REASON } from '../sync/record-times.js';
import type { Window } from '../sync/windows.js';
import type { StreamName } from './day-records.js';

const TABLES: Record<StreamName, string> = {
  payments: 'reporting.payments',
  transfers: 'reporting.transfers',
};

const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * Moves the rows of one source and stream created in the window (or at an impossible time) whose
 * `created_at` or `updated_at` is impossible at `latest` (the clock plus FUTURE_TOLERANCE) into the
 * rejects, in one statement. Returns how many moved.
 */
export async function quarantineImpossibleRows(
  pool: Pool,
  source: string,
  stream: StreamName,
  w: Window,
  latest: Date,
): Promise<number> {
  const impossible = (c: string) => `(${c} > $4 OR ${c} < $5)`;
  const { rows } = await pool.query<{ moved: number }>(
    `WITH moved AS (
       DELETE FROM ${TABLES[stream]} p
        WHERE p.source = $1
          AND ((p.created_at >= $2 AND p.created_at < $3) OR ${impossible('p.created_at')})
          AND (${impossible('p.created_at')} OR ${impossible('p.updated_at')})
       RETURNING p.*
     ),
     raw AS (
       SELECT m.source, m.id, m.created_at, m.updated_at,
              (to_jsonb(m) - 'created_at' - 'updated_at' - 'source' - 'first_seen_at' - 'synced_at')
                || jsonb_build_object('createdAt', ${iso('m.created_at')}, 'updatedAt', ${iso('m.updated_at')}) AS raw
         FROM moved m
     ),
     quarantined AS (
       INSERT INTO reporting.sync_rejects AS r (source, stream, record_id, raw, raw_hash, reason, raw_bytes)
       SELECT x.source, $6, x.id, x.raw, encode(sha256(convert_to(x.raw::text, 'UTF8')), 'hex'),
              '${IMPOSSIBLE_TIME_REASON}: the warehouse held ' ||
                CASE WHEN ${impossible('x.created_at')} THEN 'createdAt ' || ${iso('x.created_at')}
                     ELSE 'updatedAt ' || ${iso('x.updated_at')} END ||
                ', which no record can have; moved aside by reconcile --heal so that the service''s copy can land',
              octet_length(x.raw::text)
         FROM raw x
       ON CONFLICT (source, stream, raw_hash) DO UPDATE SET last_seen_at = now(), resolved_at = NULL
       RETURNING 1
     )
     SELECT (SELECT count(*) FROM quarantined)::int AS moved`,
    [source, w.start, w.end, latest, new Date(EARLIEST_RECORD_MS), stream],
  );
  return rows[0]?.moved ?? 0;
}
