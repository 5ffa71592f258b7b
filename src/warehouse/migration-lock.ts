/**
 * The migration lock: every transaction of `paysync migrate` that reads or writes a ledger (the numbered
 * migrations' or the views') holds it, so two processes migrating at once serialise and the second finds
 * nothing left to do. A transaction-level advisory lock (pg_advisory_xact_lock), not a session one: through
 * a transaction pooler (PgBouncer pool_mode=transaction) consecutive transactions of one client can run on
 * different server sessions, so a session lock taken in one statement neither covers the next transaction
 * nor is released by the unlock; a transaction lock lives exactly as long as the work it protects, on
 * whatever session that runs. It locks no table or view: readers of the reporting schema never wait on it.
 */
import type pg from 'pg';
import type { Logger } from '../log.js';

/** Arbitrary constant shared by every paysync process: the key of the migration advisory lock. */
const MIGRATION_LOCK_KEY = 7_243_001;

/** Takes the migration lock inside the open transaction; it is released by its COMMIT or ROLLBACK. */
async function lockMigrations(client: pg.Client, log: Logger): Promise<void> {
  const tried = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_xact_lock($1) AS ok', [
    MIGRATION_LOCK_KEY,
  ]);
  if (tried.rows[0]?.ok) return;
  log.info('another process is migrating this database; waiting for it');
  await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
}

/** BEGIN, the migration lock, fn, COMMIT; ROLLBACK (which also releases the lock) on any error. */
export async function underMigrationLock<T>(
  client: pg.Client,
  log: Logger,
  fn: () => Promise<T>,
): Promise<T> {
  await client.query('BEGIN');
  try {
    await lockMigrations(client, log);
    const result = await fn();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}
