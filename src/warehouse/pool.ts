/**
 * The Postgres adapter: one pool per process, with type parsers chosen on purpose (per pool, never by
 * mutating pg's global parsers, so other code sharing the module is unaffected):
 * - NUMERIC stays a string: money is exact text everywhere in paysync.
 * - int8 (count(*), sums of integers) becomes a JS number: counts here never approach 2^53, and numbers
 *   are what callers compare and print.
 * - timestamptz stays a Date (pg's default; ms precision, what the service sends).
 * - date stays 'YYYY-MM-DD' text: pg's default makes a Date at local midnight, which shifts days.
 */
import pg from 'pg';
import type { Logger } from '../log.js';

const OID = { int8: 20, date: 1082, numeric: 1700, int8Array: 1016 } as const;

const parseInt8 = (text: string): number => Number.parseInt(text, 10);
const identity = (text: string): string => text;

function getTypeParser(oid: number, format?: string): (text: string) => unknown {
  if (format !== 'binary') {
    if (oid === OID.int8) return parseInt8;
    if (oid === OID.int8Array) return (text) => pg.types.arrayParser(text, parseInt8);
    if (oid === OID.numeric || oid === OID.date) return identity;
  }
  return pg.types.getTypeParser(oid, format as 'text');
}

export interface PoolOptions {
  max?: number;
  applicationName?: string;
  /** Where errors of idle connections are reported (they are otherwise harmless: see below). */
  log?: Logger;
}

export function createPool(databaseUrl: string, opts: PoolOptions = {}): pg.Pool {
  const pool = new pg.Pool({
    connectionString: databaseUrl,
    max: opts.max ?? 10,
    application_name: opts.applicationName ?? 'paysync',
    types: { getTypeParser } as pg.CustomTypesConfig,
  });
  // An idle connection that dies (server restart, network) is dropped by the pool and emitted here;
  // without a listener Node would crash. The next query opens a fresh connection, and a real outage
  // still surfaces as query errors where the work is.
  pool.on('error', (error) => opts.log?.warn({ err: error.message }, 'idle database connection lost'));
  return pool;
}

/** Runs fn inside BEGIN … COMMIT on one connection; rolls back and rethrows on any error. */
export async function withTransaction<T>(
  pool: pg.Pool,
  fn: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const client = await pool.connect();
  let broken: Error | undefined;
  try {
    await client.query('BEGIN');
    const result = await fn(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    // A connection that cannot even roll back is destroyed rather than returned to the pool.
    await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
    throw error;
  } finally {
    client.release(broken);
  }
}
