/**
 * The last days' reconcile results (reporting.reconcile_results, sql/007), for the status page and the
 * reconcile gauges of /metrics: per day its latest run, per source and stream the counts on both sides
 * and how many statuses disagree. A warehouse without that table yet (or any query error) reads as "no
 * results" rather than breaking the page.
 */
import type { Pool } from 'pg';

export interface ReconcileRow {
  day: string;
  checkedAt: Date;
  source: string;
  stream: string;
  service: number;
  warehouse: number;
  /** Statuses whose count or amount differ between the service and the warehouse. */
  mismatches: number;
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
       count(*) FILTER (WHERE r.difference <> 0
                           OR r.service_amount IS DISTINCT FROM r.warehouse_amount)::int AS mismatches
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

/** Mismatches per day (all sources and streams of the day's latest run), oldest day first. */
export function mismatchesByDay(rows: ReconcileRow[]): Array<{ day: string; mismatches: number; at: Date }> {
  const byDay = new Map<string, { day: string; mismatches: number; at: Date }>();
  for (const r of rows) {
    const d = byDay.get(r.day) ?? { day: r.day, mismatches: 0, at: r.checkedAt };
    d.mismatches += r.mismatches;
    byDay.set(r.day, d);
  }
  return [...byDay.values()].sort((a, b) => (a.day < b.day ? -1 : 1));
}
