/**
 * Reads of the durable sync log and of open records, for the sync engine: rebuilding checkpoints after
 * Redis is lost, and finding the days that still hold records to revisit.
 */
import type pg from 'pg';
import type { CompletedWindow } from '../sync/ports.js';
import type { Stream } from '../upstream/schemas.js';
import { IMPOSSIBLE_TIME_REASON } from '../sync/record-times.js';
import { CONTRADICTING_REASON } from '../sync/copies.js';

/**
 * Windows of one source and stream whose latest run ended `complete` (never a failed or incomplete
 * one: a checkpoint rebuilt from these can only under-claim), ordered by start. With `since`, only
 * windows ending after it.
 */
export async function completedWindows(
  pool: pg.Pool,
  source: string,
  stream: Stream,
  since?: Date,
): Promise<CompletedWindow[]> {
  const { rows } = await pool.query<CompletedWindow>(
    `SELECT window_start AS "windowStart", window_end AS "windowEnd", fetched_at AS "fetchedAt", outcome, kind
       FROM reporting.sync_windows
      WHERE source = $1 AND stream = $2 AND outcome = 'complete'
        AND ($3::timestamptz IS NULL OR window_end > $3::timestamptz)
      ORDER BY window_start, window_end`,
    [source, stream, since ?? null],
  );
  return rows;
}

// These predicates repeat the partial indexes' WHERE clauses of sql/005 word for word: the planner
// uses a partial index only when the query implies its predicate. The second part: days holding open
// rejects quarantined for an impossible time (src/sync/record-times.ts), read again until the service
// sends the record with a possible one.
const OPEN_DAYS_SQL: Record<Stream, string> = {
  payments: `SELECT to_char(created_at AT TIME ZONE $2, 'YYYY-MM-DD') AS day
      FROM reporting.payments
     WHERE source = $1 AND status NOT IN ('COMPLETE', 'FAILED', 'TIMEOUT')
       AND created_at >= $4 AND created_at < $3
     UNION ${impossibleTimeDays('payments')}
     ORDER BY day`,
  transfers: `SELECT to_char(created_at AT TIME ZONE $2, 'YYYY-MM-DD') AS day
      FROM reporting.transfers
     WHERE source = $1 AND status NOT IN ('COMPLETE', 'FAILED')
       AND created_at >= $4 AND created_at < $3
     UNION ${impossibleTimeDays('transfers')}
     ORDER BY day`,
};

function impossibleTimeDays(stream: Stream): string {
  return `SELECT to_char(t.at AT TIME ZONE $2, 'YYYY-MM-DD')
      FROM reporting.sync_rejects r
     CROSS JOIN LATERAL (SELECT reporting.try_timestamptz(r.raw->>'createdAt') AS at) t
     WHERE r.source = $1 AND r.stream = '${stream}' AND r.resolved_at IS NULL
       AND r.reason LIKE '${IMPOSSIBLE_TIME_REASON}%' AND t.at >= $4 AND t.at < $3`;
}

/**
 * Local days (YYYY-MM-DD in `timeZone`) holding records of this source still in a non-final status, or
 * quarantined for an impossible time, created in [horizonStart, olderThan): the revisit query. Records newer than `olderThan` are left to
 * the live lookback; older than the horizon they are no longer revisited.
 */
export async function nonFinalDays(
  pool: pg.Pool,
  source: string,
  stream: Stream,
  timeZone: string,
  olderThan: Date,
  horizonStart: Date,
): Promise<string[]> {
  const { rows } = await pool.query<{ day: string }>(OPEN_DAYS_SQL[stream], [
    source,
    timeZone,
    olderThan,
    horizonStart,
  ]);
  return rows.map((row) => row.day);
}

/**
 * Of these windows, the ones (as `startMs/endMs`) whose latest run completed after `since`: read recently
 * enough that a revisit can wait.
 */
export async function freshWindows(
  pool: pg.Pool,
  source: string,
  stream: Stream,
  since: Date,
  windows: ReadonlyArray<{ start: Date; end: Date }>,
): Promise<Set<string>> {
  const { rows } = await pool.query<{ window_start: Date; window_end: Date }>(
    `SELECT window_start, window_end FROM reporting.sync_windows
      WHERE source = $1 AND stream = $2 AND outcome = 'complete' AND fetched_at > $3
        AND window_start = ANY($4::timestamptz[])`,
    [source, stream, since, windows.map((w) => w.start)],
  );
  return new Set(rows.map((r) => `${r.window_start.getTime()}/${r.window_end.getTime()}`));
}

/** Ids with an open reject saying the service lists them in contradicting copies (src/sync/copies.ts). */
export async function contradictedIds(pool: pg.Pool, source: string, stream: Stream): Promise<string[]> {
  const { rows } = await pool.query<{ record_id: string }>(
    `SELECT DISTINCT record_id FROM reporting.sync_rejects
      WHERE source = $1 AND stream = $2 AND resolved_at IS NULL AND record_id IS NOT NULL
        AND reason LIKE '${CONTRADICTING_REASON}%'`,
    [source, stream],
  );
  return rows.map((r) => r.record_id);
}
