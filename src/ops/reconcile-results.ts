/**
 * The last days' reconcile results (reporting.reconcile_results, sql/007), for the status page and the
 * reconcile gauges of /metrics: per day its latest run, per source and stream the counts on both sides,
 * how many statuses disagree with nothing to explain it, and how many records are quarantined (two
 * separate figures: a quarantined record is known and listed, not a mismatch). A status whose amounts the
 * service's figures could not give (a wrapper total) is not a difference. A warehouse without that table
 * yet (or any query error) reads as "no results" rather than breaking the page.
 */
import type { Pool } from 'pg';
import { MISMATCH_SQL } from '../reconcile/reconcile-store.js';

export interface ReconcileRow {
  day: string;
  checkedAt: Date;
  source: string;
  stream: string;
  service: number;
  warehouse: number;
  /** Statuses whose count (beyond the quarantined records) or compared amount differ. */
  mismatches: number;
  /** Records of the day the service lists and paysync holds in sync_rejects. */
  quarantined: number;
}

const LATEST_RUNS_SQL = `
WITH latest AS (
  SELECT DISTINCT ON (day) day, run_id, checked_at
    FROM reporting.reconcile_results
   WHERE day >= current_date - $1::int
   ORDER BY day, checked_at DESC
)
SELECT l.day::text AS day, l.checked_at, r.source, r.stream,
       sum(r.service)::int AS service, sum(r.warehouse)::int AS warehouse,
       count(*) FILTER (WHERE ${MISMATCH_SQL})::int AS mismatches,
       sum(r.quarantined)::int AS quarantined
  FROM latest l JOIN reporting.reconcile_results r USING (run_id)
 GROUP BY l.day, l.checked_at, r.source, r.stream
 ORDER BY l.day DESC, r.source, r.stream`;

type Raw = Omit<ReconcileRow, 'checkedAt'> & { checked_at: Date };

export async function recentReconcileResults(pool: Pool, days = 14): Promise<ReconcileRow[]> {
  try {
    const { rows } = await pool.query<Raw>(LATEST_RUNS_SQL, [days]);
    return rows.map(({ checked_at, ...r }) => ({ ...r, checkedAt: checked_at }));
  } catch {
    return [];
  }
}

export interface DayResult {
  day: string;
  mismatches: number;
  quarantined: number;
  at: Date;
}

/** Mismatches and quarantined records per day (all sources and streams of its latest run), oldest first. */
export function mismatchesByDay(rows: ReconcileRow[]): DayResult[] {
  const byDay = new Map<string, DayResult>();
  for (const r of rows) {
    const d = byDay.get(r.day) ?? { day: r.day, mismatches: 0, quarantined: 0, at: r.checkedAt };
    d.mismatches += r.mismatches;
    d.quarantined += r.quarantined;
    byDay.set(r.day, d);
  }
  return [...byDay.values()].sort((a, b) => (a.day < b.day ? -1 : 1));
}
