/**
 * One writer per day's pack at a time, across every paysync process: an advisory lock keyed on the day.
 * Taken before the caller's transaction starts, so an export that waited for another one reads the
 * warehouse (and the other's snapshot) as it is after that one committed.
 *
 * The lock is transaction-level (pg_advisory_xact_lock), held by a transaction of its own on a second
 * connection that stays open while `fn` runs on the first: a session lock would not survive a transaction
 * pooler (PgBouncer pool_mode=transaction hands each transaction whichever server session is free, so
 * the lock, the work and the unlock could land on three different sessions), while an open transaction
 * keeps its server session, and its end (COMMIT, or the connection dropping) releases the lock.
 */
import type { Pool, PoolClient } from 'pg';

/** Arbitrary constant shared by every paysync process: the class of the pack locks (hashtext(day) is the key). */
const PACK_LOCK_CLASS = 7_243_005;

export async function withDayLock<T>(
  pool: Pool,
  day: string,
  fn: (client: PoolClient) => Promise<T>,
): Promise<T> {
  const holder = await pool.connect();
  let broken: Error | undefined;
  try {
    await holder.query('BEGIN');
    await holder.query('SELECT pg_advisory_xact_lock($1, hashtext($2))', [PACK_LOCK_CLASS, day]);
    const client = await pool.connect();
    try {
      return await fn(client);
    } finally {
      client.release();
    }
  } finally {
    // The transaction only holds the lock: its end (a rollback, if it failed) releases it. A holder that
    // cannot end its transaction is destroyed rather than reused.
    await holder.query('COMMIT').catch((error: Error) => (broken = error));
    holder.release(broken);
  }
}
