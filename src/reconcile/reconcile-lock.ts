/**
 * One reconcile (with its re-reads) per day at a time, across every paysync process: a lease row in
 * reporting.reconcile_leases (sql/015). A row rather than a session advisory lock, because a session lock
 * does not survive PgBouncer's transaction pooling; the lease expires by itself if its holder dies, and
 * the holder renews it while it works. A second reconcile of the same day waits for the first to end
 * (then compares the warehouse as the first left it) instead of running beside it.
 */
import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';

export interface LeaseOptions {
  /** How long a lease lasts without renewal (renewed every third of it). */
  leaseMs?: number;
  /** How often a waiting reconcile looks again. */
  pollMs?: number;
  /** Called once when the day is found busy, with the holder (for a "waiting for…" line). */
  onWait?: (holder: string) => void;
}

const ACQUIRE_SQL = `
  INSERT INTO reporting.reconcile_leases AS l (day, holder, expires_at)
  VALUES ($1::date, $2, now() + $3 * interval '1 millisecond')
  ON CONFLICT (day) DO UPDATE
    SET holder = EXCLUDED.holder, acquired_at = now(), expires_at = EXCLUDED.expires_at
    WHERE l.expires_at < now()
  RETURNING holder`;

export async function withReconcileLease<T>(
  pool: Pool,
  day: string,
  fn: () => Promise<T>,
  options: LeaseOptions = {},
): Promise<T> {
  const leaseMs = options.leaseMs ?? 10 * 60_000;
  const holder = `${process.pid}:${randomUUID()}`;
  let told = false;
  for (;;) {
    const { rowCount } = await pool.query(ACQUIRE_SQL, [day, holder, leaseMs]);
    if (rowCount === 1) break;
    if (!told) {
      told = true;
      const { rows } = await pool.query<{ holder: string }>(
        `SELECT holder FROM reporting.reconcile_leases WHERE day = $1::date`,
        [day],
      );
      options.onWait?.(rows[0]?.holder ?? 'another process');
    }
    await new Promise((resolve) => setTimeout(resolve, options.pollMs ?? 1_000));
  }
  const renew = setInterval(() => {
    pool
      .query(
        `UPDATE reporting.reconcile_leases SET expires_at = now() + $3 * interval '1 millisecond'
          WHERE day = $1::date AND holder = $2`,
        [day, holder, leaseMs],
      )
      .catch(() => undefined); // a missed renewal only shortens the lease
  }, leaseMs / 3);
  renew.unref();
  try {
    return await fn();
  } finally {
    clearInterval(renew);
    await pool
      .query(`DELETE FROM reporting.reconcile_leases WHERE day = $1::date AND holder = $2`, [day, holder])
      .catch(() => undefined); // it expires by itself
  }
}
