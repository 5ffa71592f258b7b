/**
 * Applies `sql/views/` after the numbered migrations. A view file is run when its checksum differs from
 * its row in the views ledger (public.paysync_views) or its view is missing from the database; each in its
 * own transaction under the migration lock, together with its ledger row, in dependency order
 * (view-files.ts). A file whose row matches and whose view exists is not touched: a `migrate` with nothing
 * to do runs no DDL and takes no lock on any view, so it neither waits for analysts' long queries nor
 * holds them up. The views' ledger is apart from the numbered migrations' one: those rows are frozen, these
 * are rewritten whenever a file changes.
 *
 * Changing a view (the rule for developers):
 * - Edit `sql/views/<view>.sql`, the view's one definition. It is applied with CREATE OR REPLACE VIEW,
 *   which keeps every object built on the view, analysts' own views included, and can only add columns
 *   at the end of the list.
 * - A change CREATE OR REPLACE cannot make goes first in a new numbered migration acting on that view only:
 *   a renamed column: `ALTER VIEW reporting.<view> RENAME COLUMN old TO new` (views built on it follow);
 *   a retyped, removed or moved column: `DROP VIEW IF EXISTS reporting.<view>`, naming any of our views
 *   that read it too. Never CASCADE: it would silently take analysts' views with it, where a plain DROP
 *   stops and names them, so that their owners can drop and recreate them around the release. The same
 *   `migrate` then creates the dropped views from their files (a missing view is applied whatever its
 *   ledger row says), so the definition is written once, in its file. IF EXISTS: on a new database a
 *   view that only a file creates does not exist yet when the numbered migrations run.
 * - A view retired: a numbered migration drops it (same rule) and its file goes; its ledger row stays,
 *   unused (a file of that name added later has another checksum, so it is applied).
 * - The numbered migrations written before `sql/views/` keep their view DDL as history: they are frozen
 *   (the ledger checks their SHA-256) and a file here replaces what they created.
 */
import type pg from 'pg';
import { MigrationError } from '../errors.js';
import type { Logger } from '../log.js';
import { underMigrationLock } from './migration-lock.js';
import type { ViewFile } from './view-files.js';

const VIEW_LEDGER_DDL = `
  CREATE TABLE IF NOT EXISTS public.paysync_views (
    name       text        PRIMARY KEY,
    checksum   text        NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
  )`;

const EXISTING_VIEWS = `
  SELECT c.relname AS view
    FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
   WHERE n.nspname = 'reporting' AND c.relkind = 'v'`;

/** SQLSTATEs of a CREATE OR REPLACE that would rename, retype or drop a column. */
const COLUMN_CHANGE = new Set(['42P16', '42804']);

/** The files to run: changed since applied, or whose view is missing. Reads only the ledger and catalog. */
async function pending(client: pg.Client, files: readonly ViewFile[]): Promise<ViewFile[]> {
  await client.query(VIEW_LEDGER_DDL);
  const ledger = await client.query<{ name: string; checksum: string }>(
    'SELECT name, checksum FROM public.paysync_views',
  );
  const applied = new Map(ledger.rows.map((row) => [row.name, row.checksum]));
  const existing = new Set((await client.query<{ view: string }>(EXISTING_VIEWS)).rows.map((r) => r.view));
  return files.filter((f) => applied.get(f.name) !== f.checksum || !existing.has(f.view));
}

/** A PostgreSQL error's message and its detail (which names, say, the views that depend on a dropped one). */
export function withDetail(error: unknown): string {
  const { message, detail } = error as { message?: string; detail?: string };
  return detail ? `${message} (${detail.replace(/\n/g, '; ')})` : String(message);
}

function failure(file: ViewFile, error: unknown): MigrationError {
  const { code } = error as { code?: string };
  const hint = COLUMN_CHANGE.has(code ?? '')
    ? ': CREATE OR REPLACE VIEW can only add columns at the end; rename a column with ALTER VIEW … RENAME ' +
      'COLUMN, or drop this one view (never CASCADE), in a new numbered migration first (src/warehouse/apply-views.ts)'
    : '';
  return new MigrationError(`view file sql/views/${file.name} failed: ${withDetail(error)}${hint}`, {
    cause: error,
  });
}

/**
 * Runs one file in its own locked transaction with its ledger row. Returns false when, checked again
 * under the lock, it no longer needs running (another process applied it meanwhile).
 */
async function applyView(client: pg.Client, file: ViewFile, log: Logger): Promise<boolean> {
  try {
    return await underMigrationLock(client, log, async () => {
      if ((await pending(client, [file])).length === 0) return false;
      await client.query(file.sql);
      await client.query(
        `INSERT INTO public.paysync_views (name, checksum) VALUES ($1, $2)
         ON CONFLICT (name) DO UPDATE SET checksum = EXCLUDED.checksum, applied_at = now()`,
        [file.name, file.checksum],
      );
      return true;
    });
  } catch (error) {
    throw failure(file, error);
  }
}

/** Applies the view files that changed or are missing, in the given (dependency) order; returns their names. */
export async function applyViews(
  client: pg.Client,
  files: readonly ViewFile[],
  log: Logger,
): Promise<string[]> {
  const todo = await underMigrationLock(client, log, () => pending(client, files));
  const done: string[] = [];
  for (const file of todo) {
    if (!(await applyView(client, file, log))) continue;
    done.push(file.name);
    log.info({ view: file.name }, 'applied view');
  }
  return done;
}
