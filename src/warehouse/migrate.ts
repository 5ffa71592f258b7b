/**
 * `paysync migrate`: creates the database when missing, applies the numbered `sql/NNN_*.sql` files in
 * order, each in its own transaction together with its ledger row (name + checksum) in
 * public.paysync_migrations, then the view files of `sql/views/` that changed (apply-views.ts).
 *
 * Guarantees: running it again is a no-op that reads its ledgers and locks no reporting table or view;
 * an applied numbered file whose statements changed (migration-files.ts: anything after its head
 * comment) stops everything with a MigrationError naming it (a changed migration must become a new
 * numbered file); two processes starting at once serialise on the
 * migration lock (migration-lock.ts) taken first thing in every transaction that reads or writes a
 * ledger, and the second finds nothing left to do.
 */
import pg from 'pg';
import { MigrationError } from '../errors.js';
import { silentLogger, type Logger } from '../log.js';
import { applyViews, withDetail } from './apply-views.js';
import { defaultSqlDir, readMigrations, type MigrationFile } from './migration-files.js';
import { underMigrationLock } from './migration-lock.js';
import { readViews } from './view-files.js';

export interface MigrateResult {
  /** Numbered migrations applied by this run, in order. */
  applied: string[];
  alreadyApplied: number;
  /** View files (sql/views) applied by this run, in dependency order: changed, new, or their view missing. */
  views: string[];
}

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
    if (checksum !== undefined && !file.accepted.includes(checksum)) {
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
    return await underMigrationLock(client, log, async () => {
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
    throw new MigrationError(`migration ${file.name} failed: ${withDetail(error)}`, { cause: error });
  }
}

/** The numbered migrations not applied yet, in order; returns the names this process applied. */
async function applyNumbered(
  client: pg.Client,
  files: readonly MigrationFile[],
  log: Logger,
): Promise<string[]> {
  const applied = await underMigrationLock(client, log, () => appliedChecksums(client));
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
  return done;
}

/**
 * Migrates the database at `databaseUrl` from `sqlDir` (default: the package's `sql/`). Every file is
 * read and checked before anything runs, so a malformed view file stops it before the first migration.
 */
export async function migrate(
  databaseUrl: string,
  opts: { log?: Logger; sqlDir?: string } = {},
): Promise<MigrateResult> {
  const log = opts.log ?? silentLogger;
  const sqlDir = opts.sqlDir ?? defaultSqlDir();
  const files = await readMigrations(sqlDir);
  const views = await readViews(sqlDir);
  if (await ensureDatabase(databaseUrl))
    log.info({ database: databaseName(databaseUrl) }, 'created database');
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'paysync migrate' });
  await client.connect();
  try {
    const applied = await applyNumbered(client, files, log);
    const appliedViews = await applyViews(client, views, log);
    return { applied, alreadyApplied: files.length - applied.length, views: appliedViews };
  } finally {
    await client.end();
  }
}
