/**
 * `paysync migrate`: creates the database when missing, then applies the `sql/` files in order, each in
 * its own transaction together with its ledger row (name + checksum) in public.paysync_migrations.
 *
 * Guarantees: running it again is a no-op; an applied file whose bytes changed stops everything with a
 * MigrationError naming it (a changed migration must become a new numbered file); two processes starting
 * at once serialise on a session advisory lock, and the second finds nothing left to do.
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

async function lockMigrations(client: pg.Client, log: Logger): Promise<void> {
  const tried = await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [
    MIGRATION_LOCK_KEY,
  ]);
  if (tried.rows[0]?.ok) return;
  log.info('another process is migrating this database; waiting for it');
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
}

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

async function applyOne(client: pg.Client, file: MigrationFile): Promise<void> {
  await client.query('BEGIN');
  try {
    // Ledger row first: if anything slipped past the lock, the primary key stops the second copy.
    await client.query('INSERT INTO public.paysync_migrations (name, checksum) VALUES ($1, $2)', [
      file.name,
      file.checksum,
    ]);
    await client.query(file.sql);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
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
    await lockMigrations(client, log);
    const applied = await appliedChecksums(client);
    refuseChanged(files, applied);
    const unknown = [...applied.keys()].filter((name) => !files.some((f) => f.name === name));
    if (unknown.length > 0) {
      log.warn(
        { migrations: unknown },
        'the database has migrations this paysync does not know (a newer version?)',
      );
    }
    const pending = files.filter((file) => !applied.has(file.name));
    for (const file of pending) {
      await applyOne(client, file);
      log.info({ migration: file.name }, 'applied migration');
    }
    return { applied: pending.map((f) => f.name), alreadyApplied: files.length - pending.length };
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => undefined);
    await client.end();
  }
}
