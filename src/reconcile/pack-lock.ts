/**
 * One writer per day's pack at a time, across every paysync process: a session advisory lock keyed on the
 * day. Taken before any transaction starts, so an export that waited for another one reads the warehouse
 * (and the other's snapshot) as it is after that one committed.
 */
import type { Pool, PoolClient } from 'pg';

/** Arbitrary constant shared by every paysync process: the class of the pack locks (hashtext(day) is the key). */
const PACK_LOCK_CLASS = 7_243_005;

export async function withDayLock<T>(
  pool: Pool,
  day: string,
  fn: (client: PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('SELECT pg_advisory_lock($1, hashtext($2))', [PACK_LOCK_CLASS, day]);
    try {
      return await fn(client);
    } finally {
      await client
        .query('SELECT pg_advisory_unlock($1, hashtext($2))', [PACK_LOCK_CLASS, day])
        .catch((error: Error) => (broken = error)); // a connection that cannot unlock is not reused
    }
  } finally {
    client.release(broken);
  }
}
