/**
 * What the warehouse holds of one source's payments in a range of the service's clock, as the service
 * would count them for a list request with that `dateFrom`/`dateTo` (whole Unix seconds): the evidence a
 * lookback read needs to skip what cannot have changed (src/sync/lookback.ts).
 *
 * The service counts every record it lists, valid or quarantined, once per id. Whether its bounds are
 * inclusive is an open point, so a record created in the first or last second of the range could be
 * counted or not: when the warehouse holds one there, it cannot tell (`held` null). An open reject whose
 * creation time it cannot read makes it unable to tell too.
 */
import type pg from 'pg';
import type { HeldInRange } from '../sync/ports.js';

const HELD_SQL = `
WITH recs AS (
  SELECT p.id, p.created_at AS at
    FROM reporting.payments p
   WHERE p.source = $1 AND p.created_at >= to_timestamp($2) AND p.created_at < to_timestamp($3 + 1)
  UNION ALL
  SELECT coalesce(r.record_id, 'reject:' || r.reject_id), reporting.try_timestamptz(r.raw->>'createdAt')
    FROM reporting.sync_rejects r
   WHERE r.source = $1 AND r.stream = 'payments' AND r.resolved_at IS NULL
)
SELECT count(DISTINCT id) FILTER (WHERE at >= to_timestamp($2 + 1) AND at < to_timestamp($3))::int AS inside,
       count(*) FILTER (WHERE at IS NULL
                           OR (at >= to_timestamp($2) AND at < to_timestamp($2 + 1))
                           OR (at >= to_timestamp($3) AND at < to_timestamp($3 + 1)))::int AS unsure
  FROM recs`;

// The partial index of open payments (sql/005) serves this: the same predicate, word for word.
const OPEN_SQL = `
SELECT id, created_at AS "createdAt", status
  FROM reporting.payments
 WHERE source = $1 AND status NOT IN ('COMPLETE', 'FAILED', 'TIMEOUT')
   AND created_at >= to_timestamp($2) AND created_at < to_timestamp($3 + 1)
 ORDER BY created_at, id`;

export async function heldInRange(
  pool: pg.Pool,
  source: string,
  dateFrom: number,
  dateTo: number,
): Promise<HeldInRange> {
  const [held, open] = await Promise.all([
    pool.query<{ inside: number; unsure: number }>(HELD_SQL, [source, dateFrom, dateTo]),
    pool.query<{ id: string; createdAt: Date; status: string }>(OPEN_SQL, [source, dateFrom, dateTo]),
  ]);
  const row = held.rows[0] ?? { inside: 0, unsure: 0 };
  return { held: row.unsure > 0 ? null : row.inside, open: open.rows };
}
