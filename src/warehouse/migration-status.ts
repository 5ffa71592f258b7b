/**
 * Whether the database holds every numbered migration this paysync ships: what a worker waits for before
 * it takes jobs, and what its readiness probe checks. Reads the ledger only (no lock, no DDL), so a probe
 * every few seconds costs one small query. Migrations the database has and this paysync does not know (a
 * newer release ran `migrate`) do not matter here: an older worker keeps running through a rolling upgrade.
 */
import type { Pool } from 'pg';
import { ServiceUnreachableError } from '../errors.js';
import { defaultSqlDir, readMigrations } from './migration-files.js';

const UNDEFINED_TABLE = '42P01';
const UNDEFINED_DATABASE = '3D000';

/** The names of the numbered migrations in `sqlDir` (default: the package's `sql/`), in order. */
export async function shippedMigrations(sqlDir = defaultSqlDir()): Promise<string[]> {
  return (await readMigrations(sqlDir)).map((file) => file.name);
}

/**
 * The names in `shipped` the database has not applied, in order (all of them when `migrate` never ran).
 * A database that does not exist yet is a ServiceUnreachableError saying to run `paysync migrate`; other
 * PostgreSQL errors (unreachable, refused) are thrown as they come.
 */
export async function pendingMigrations(
  pool: Pick<Pool, 'query'>,
  shipped: readonly string[],
): Promise<string[]> {
  let applied: Set<string>;
  try {
    const { rows } = await pool.query<{ name: string }>('SELECT name FROM public.paysync_migrations');
    applied = new Set(rows.map((row) => row.name));
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === UNDEFINED_TABLE) return [...shipped];
    if (code === UNDEFINED_DATABASE)
      throw new ServiceUnreachableError('the database in DATABASE_URL does not exist: run `paysync migrate`');
    throw error;
  }
  return shipped.filter((name) => !applied.has(name));
}

/** One line for a non-empty list of pending migrations: how many, the first few, what to run. */
export function describePending(pending: readonly string[]): string {
  const shown = pending.slice(0, 3).join(', ') + (pending.length > 3 ? ', …' : '');
  return `${pending.length} migration(s) not applied (${shown}): run \`paysync migrate\``;
}
