/** Where reconcile results are kept: reporting.reconcile_results, one row per source × stream × status. */
import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import type { ReconcileSummary } from './manifest.js';
import type { ReconcileRow } from './reconcile-table.js';

export async function recordReconcile(
  pool: Pool,
  day: string,
  rows: readonly ReconcileRow[],
  checkedAt: Date,
): Promise<void> {
  const runId = randomUUID();
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    for (const r of rows) {
      await client.query(
        `INSERT INTO reporting.reconcile_results
           (run_id, day, checked_at, source, stream, status, service, warehouse, difference,
            service_amount, warehouse_amount, method)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
        [
          runId,
          day,
          checkedAt,
          r.source,
          r.stream,
          r.status,
          r.service,
          r.warehouse,
          r.difference,
          r.serviceAmount,
          r.warehouseAmount,
          r.method,
        ],
      );
    }
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** The day's latest reconcile run, as the manifest shows it; null when the day was never reconciled. */
export async function latestReconcile(db: Pool | PoolClient, day: string): Promise<ReconcileSummary | null> {
  const { rows } = await db.query(
    `SELECT checked_at, source, stream, status, service, warehouse, difference, method
       FROM reporting.reconcile_results
      WHERE run_id = (SELECT run_id FROM reporting.reconcile_results WHERE day = $1::date
                       ORDER BY checked_at DESC LIMIT 1)
      ORDER BY source COLLATE "C", stream, status COLLATE "C"`,
    [day],
  );
  if (rows.length === 0) return null;
  return {
    checkedAt: (rows[0].checked_at as Date).toISOString(),
    mismatches: rows.filter((r) => r.difference !== 0).length,
    rows: rows.map((r) => ({
      source: r.source,
      stream: r.stream,
      status: r.status,
      service: r.service,
      warehouse: r.warehouse,
      difference: r.difference,
      method: r.method,
    })),
  };
}
