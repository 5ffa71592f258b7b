/**
 * Where reconcile results are kept: reporting.reconcile_results (one row per source × stream × status)
 * and reporting.reconcile_records (the records behind the differences), both written in one transaction
 * per run (sql/007, sql/012).
 */
import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from 'pg';
import type { ReconcileSummary } from './manifest.js';
import type { RecordDifference } from './record-diff.js';
import type { ReconcileRow } from './reconcile-table.js';

const INSERT_ROW = `
  INSERT INTO reporting.reconcile_results
    (run_id, day, checked_at, source, stream, status, service, warehouse, difference,
     service_amount, warehouse_amount, method, quarantined, unexplained, amount_compared)
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)`;

/** All of a run's records in one statement (a day missing from the warehouse lists every record). */
const INSERT_RECORDS = `
  INSERT INTO reporting.reconcile_records
    (run_id, day, source, stream, kind, record_id, service_status, warehouse_status,
     service_amount, warehouse_amount, reason)
  SELECT $1, $2, * FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
                               $9::numeric[], $10::numeric[], $11::text[])`;

/** Runs per day whose records (reconcile_records) are kept; their rows (reconcile_results) all are. */
const KEPT_RUNS = 10;

const PRUNE_RECORDS = `
  DELETE FROM reporting.reconcile_records
   WHERE day = $1::date
     AND run_id NOT IN (SELECT run_id FROM reporting.reconcile_results WHERE day = $1::date
                         GROUP BY run_id ORDER BY max(checked_at) DESC LIMIT $2)`;

export async function recordReconcile(
  pool: Pool,
  day: string,
  result: { rows: readonly ReconcileRow[]; differences: readonly RecordDifference[] },
  checkedAt: Date,
): Promise<string> {
  const runId = randomUUID();
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    for (const r of result.rows) {
      await client.query(INSERT_ROW, [
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
        r.quarantined,
        r.unexplained,
        r.serviceAmount !== null && r.warehouseAmount !== null,
      ]);
    }
    const d = result.differences;
    if (d.length > 0) {
      const col = <K extends keyof RecordDifference>(k: K) => d.map((x) => x[k]);
      await client.query(INSERT_RECORDS, [
        runId,
        day,
        col('source'),
        col('stream'),
        col('kind'),
        col('id'),
        col('serviceStatus'),
        col('warehouseStatus'),
        col('serviceAmount'),
        col('warehouseAmount'),
        col('reason'),
      ]);
    }
    // the records of a day's older runs only explain history: the last KEPT_RUNS runs keep theirs
    await client.query(PRUNE_RECORDS, [day, KEPT_RUNS]);
    await client.query('COMMIT');
    return runId;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
}

/** A row nothing explains, in SQL: the same rule as reconcile-table.ts isMismatch. */
export const MISMATCH_SQL = `(coalesce(unexplained, difference) <> 0 OR (amount_compared AND difference = quarantined
                             AND service_amount <> warehouse_amount))`;

/** The day's latest reconcile run, as the manifest shows it; null when the day was never reconciled. */
export async function latestReconcile(db: Pool | PoolClient, day: string): Promise<ReconcileSummary | null> {
  const { rows } = await db.query(
    `SELECT run_id, checked_at, source, stream, status, service, warehouse, difference, quarantined,
            coalesce(unexplained, difference) AS unexplained, amount_compared, method, ${MISMATCH_SQL} AS mismatch
       FROM reporting.reconcile_results
      WHERE run_id = (SELECT run_id FROM reporting.reconcile_results WHERE day = $1::date
                       ORDER BY checked_at DESC LIMIT 1)
      ORDER BY source COLLATE "C", stream, status COLLATE "C"`,
    [day],
  );
  if (rows.length === 0) return null;
  const kinds = await db.query<{ kind: string; n: number }>(
    `SELECT kind, count(*)::int AS n FROM reporting.reconcile_records WHERE run_id = $1 GROUP BY kind`,
    [rows[0].run_id],
  );
  return {
    checkedAt: (rows[0].checked_at as Date).toISOString(),
    mismatches: rows.filter((r) => r.mismatch).length,
    quarantined: rows.reduce((n, r) => n + (r.quarantined as number), 0),
    records: Object.fromEntries(kinds.rows.map((k) => [k.kind, k.n])),
    rows: rows.map((r) => ({
      source: r.source,
      stream: r.stream,
      status: r.status,
      service: r.service,
      warehouse: r.warehouse,
      difference: r.difference,
      quarantined: r.quarantined,
      unexplained: r.unexplained,
      amountCompared: r.amount_compared,
      method: r.method,
    })),
  };
}

/** The records behind the day's latest reconcile run (for the pack's differences.csv). */
export async function latestReconcileRecords(
  db: Pool | PoolClient,
  day: string,
): Promise<RecordDifference[]> {
  const { rows } = await db.query(
    `SELECT source, stream, kind, record_id AS id, service_status AS "serviceStatus",
            warehouse_status AS "warehouseStatus", service_amount::text AS "serviceAmount",
            warehouse_amount::text AS "warehouseAmount", reason
       FROM reporting.reconcile_records
      WHERE run_id = (SELECT run_id FROM reporting.reconcile_results WHERE day = $1::date
                       ORDER BY checked_at DESC LIMIT 1)
      ORDER BY source COLLATE "C", stream, kind, record_id COLLATE "C"`,
    [day],
  );
  return rows as RecordDifference[];
}
