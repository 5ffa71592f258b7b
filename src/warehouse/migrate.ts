/**
 * `paysync migrate`: creates the database when missing, then applies the `sql/` files in order, each in
 * its own transaction together with its ledger row (name + checksum) in public.paysync_migrations.
 *
 * Guarantees: running it again is a no-op; an applied file whose bytes changed stops everything with a
 * MigrationError naming it (a changed migration must become a new numbered file); two processes starting
 * at once serialise on a transaction-level advisory lock (pg_advisory_xact_lock) taken first thing in
 * every transaction that reads or writes the ledger, and the second finds nothing left to do.
 * Transaction-level, not session-level: through a transaction pooler (PgBouncer pool_mode=transaction)
 * consecutive transactions of one client can run on different server sessions, so a session lock taken
 * in one statement neither covers the next transaction nor is released by the unlock; a transaction lock
 * lives exactly as long as the work it protects, on whatever session that runs.
 */
import pg from 'pg';
import { MigrationError } from '../errors.js';
import { silentLogger, type Logger } from '../log.js';
import { defaultSqlDir, readMigrations, type MigrationFile } from './migration-files.js';

export interface MigrateResult {
  applied: string[];
  alreadyApplied: number;
}

/** Arbitrary constant shared by every paysync process: the key of the migration advisory lock. */
const MIGRATION_LOCK_KEY = 7_243_001;

const DUPLICATE_DATABASE = '42P04';
const UNIQUE_VIOLATION = '23505'; // a concurrent CREATE DATABASE can surface as this instead of 42P04

const LEDGER_DDL = `
  CREATE TABLE IF NOT EXISTS public.paysync_migrations (
    name       text        PRIMARY KEY,
    checksum   text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`;

export function databaseName(databaseUrl: string): string {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.replace(/^\//, ''));
  if (!name) throw new MigrationError('DATABASE_URL names no database (expected …/paysync)');
  return name;
}

/** The URL of the `postgres` maintenance database on the same server, same credentials. */
export function maintenanceUrl(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  url.pathname = '/postgres';
  return url.toString();
}

/** Creates the database named in the URL when it does not exist. Returns true when it created it. */
export async function ensureDatabase(databaseUrl: string): Promise<boolean> {
  const name = databaseName(databaseUrl);
  const admin = new pg.Client({ connectionString: maintenanceUrl(databaseUrl) });
  await admin.connect();
  try {
    const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount) return false;
    // CREATE DATABASE takes no parameters: the name is quoted as an identifier instead.
    await admin.query(`CREATE DATABASE ${admin.escapeIdentifier(name)}`);
    return true;
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === DUPLICATE_DATABASE || code === UNIQUE_VIOLATION) return false;
    throw error;
  } finally {
    await admin.end();
  }
}

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
async function locked<T>(client: pg.Client, log: Logger, fn: () => Promise<T>): Promise<T> {
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

/** The ledger (created under the lock: two concurrent CREATE TABLE IF NOT EXISTS can collide). */
async function appliedChecksums(client: pg.Client): Promise<Map<string, string>> {
  await client.query(LEDGER_DDL);
  const { rows } = await client.query<{ name: string; checksum: string }>(
    'SELECT name, checksum FROM public.paysync_migrations',
  );
  return new Map(rows.map((row) => [row.name, row.checksum]));
}

function refuseChanged(files: readonly MigrationFile[], applied: Map<string, string>): void {
  for (const file of files) {
    const checksum = applied.get(file.name);
    if (checksum !== undefined && checksum !== file.checksum) {
      throw new MigrationError(
        `migration ${file.name} was changed after it was applied (checksum ${checksum.slice(0, 12)} in the ` +
          `database, ${file.checksum.slice(0, 12)} on disk); restore the file and put the change in a new numbered migration`,
      );
    }
  }
}

/**
 * Applies one file in its own locked transaction, together with its ledger row. Returns false when
 * another process applied it since the ledger was read (checked again under the lock).
 */
async function applyOne(client: pg.Client, file: MigrationFile, log: Logger): Promise<boolean> {
  try {
    return await locked(client, log, async () => {
      const { rows } = await client.query<{ checksum: string }>(
        'SELECT checksum FROM public.paysync_migrations WHERE name = $1',
        [file.name],
      );
      if (rows[0]) {
        refuseChanged([file], new Map([[file.name, rows[0].checksum]]));
        return false;
      }
      // Ledger row first: if anything slipped past the lock, the primary key stops the second copy.
      await client.query('INSERT INTO public.paysync_migrations (name, checksum) VALUES ($1, $2)', [
        file.name,
        file.checksum,
      ]);
      await client.query(file.sql);
      return true;
    });
  } catch (error) {
    if (error instanceof MigrationError) throw error;
    throw new MigrationError(`migration ${file.name} failed: ${(error as Error).message}`, { cause: error });
  }
}

export async function migrate(
  databaseUrl: string,
  opts: { log?: Logger; sqlDir?: string } = {},
): Promise<MigrateResult> {
  const log = opts.log ?? silentLogger;
  const files = await readMigrations(opts.sqlDir ?? defaultSqlDir());
  if (await ensureDatabase(databaseUrl))
    log.info({ database: databaseName(databaseUrl) }, 'created database');
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'paysync migrate' });
  await client.connect();
  try {
    const applied = await locked(client, log, () => appliedChecksums(client));
    refuseChanged(files, applied);
    const unknown = [...applied.keys()].filter((name) => !files.some((f) => f.name === name));
    if (unknown.length > 0) {
      log.warn(
        { migrations: unknown },
        'the database has migrations this paysync does not know (a newer version?)',
      );
    }
    const done: string[] = [];
    for (const file of files.filter((f) => !applied.has(f.name))) {
      if (!(await applyOne(client, file, log))) continue;
      done.push(file.name);
      log.info({ migration: file.name }, 'applied migration');
    }
    return { applied: done, alreadyApplied: files.length - done.length };
  } finally {
    await client.end();
  }
}
