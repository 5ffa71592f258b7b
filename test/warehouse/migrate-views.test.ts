/**
 * `paysync migrate` and sql/views: each view is defined by its one file, applied after the numbered
 * migrations in dependency order, only when its file changed or its view is missing, without ever taking
 * a lock on a view when there is nothing to do, and never by dropping what analysts built on it.
 */
import { appendFile, cp, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { MigrationError } from '../../src/errors.js';
import { migrate, type MigrateResult } from '../../src/warehouse/migrate.js';
import { defaultSqlDir } from '../../src/warehouse/migration-files.js';
import { inDependencyOrder, readViews, type ViewFile } from '../../src/warehouse/view-files.js';
import { createTestDatabase, sqlChecksum, type TestDatabase } from '../helpers/db.js';

/** The numbered migrations up to this one were written before sql/views: their view DDL is history. */
const LAST_MIGRATION_BEFORE_VIEW_FILES = 17;

const dirs: string[] = [];
/** A copy of sql/ (views included) that a test may change. */
async function sqlCopy(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'paysync-sql-'));
  dirs.push(dir);
  await cp(defaultSqlDir(), dir, { recursive: true });
  return dir;
}
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

async function connected(url: string): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  return client;
}

const file = (view: string, dependsOn: string[] = []): ViewFile => ({
  name: `${view}.sql`,
  view,
  sql: '',
  checksum: view,
  dependsOn,
});

describe('the view files', () => {
  it('put each view after the views it reads, ties by name, and refuse a cycle', () => {
    const order = inDependencyOrder([file('a', ['c']), file('b'), file('c', ['d']), file('d')]);
    expect(order.map((f) => f.view)).toEqual(['b', 'd', 'c', 'a']);
    expect(() => inDependencyOrder([file('a', ['b']), file('b', ['a'])])).toThrow(/cycle: a \(reads b\)/);
  });

  it('derive the order from the SQL: the status views come after the history they read', async () => {
    const views = await readViews(defaultSqlDir());
    const at = (view: string) => views.findIndex((v) => v.view === view);
    expect(views.find((v) => v.view === 'payment_statuses_observed')?.dependsOn).toEqual([
      'payment_status_history',
    ]);
    expect(at('payment_status_history')).toBeLessThan(at('payment_statuses_observed'));
    expect(at('payment_status_history')).toBeLessThan(at('payment_status_transitions'));
  });

  it('refuse a file that drops, or that defines a view other than its own, naming it', async () => {
    const dir = await sqlCopy();
    const rejects = join(dir, 'views', 'open_rejects.sql');
    const original = await readFile(rejects, 'utf8');
    await writeFile(rejects, `DROP VIEW reporting.open_rejects;\n${original}`);
    await expect(readViews(dir)).rejects.toThrow(/sql\/views\/open_rejects\.sql holds a DROP/);
    await writeFile(rejects, original.replace('VIEW reporting.open_rejects', 'VIEW reporting.rejects_open'));
    await expect(readViews(dir)).rejects.toThrow(
      /open_rejects\.sql must define its view as CREATE OR REPLACE/,
    );
  });

  it('are part of the test template key: a changed view builds a new template', async () => {
    const dir = await sqlCopy();
    const before = await sqlChecksum(dir);
    await appendFile(join(dir, 'views', 'open_rejects.sql'), '\n-- changed\n');
    expect(await sqlChecksum(dir)).not.toBe(before);
  });

  it('hold every view of a migrated database, one file each', async () => {
    const db = await createTestDatabase('views_all');
    try {
      const { rows } = await db.pool.query<{ view: string }>(
        "SELECT table_name AS view FROM information_schema.views WHERE table_schema = 'reporting' ORDER BY 1",
      );
      const files = await readViews(defaultSqlDir());
      expect(rows.map((r) => r.view)).toEqual(files.map((f) => f.view).sort());
    } finally {
      await db.drop();
    }
  });

  it('are the only place a view is defined: numbered migrations after them create none', async () => {
    const later = (await readdir(defaultSqlDir())).filter(
      (name) => Number(/^(\d{3,})_/.exec(name)?.[1] ?? 0) > LAST_MIGRATION_BEFORE_VIEW_FILES,
    );
    for (const name of later) {
      const sql = (await readFile(join(defaultSqlDir(), name), 'utf8')).replace(/--[^\n]*/g, '');
      // allowed: ALTER VIEW … RENAME COLUMN, DROP VIEW IF EXISTS without CASCADE (see apply-views.ts)
      expect([name, /\bCREATE\s+(OR\s+REPLACE\s+)?VIEW\b/i.test(sql)]).toEqual([name, false]);
      expect([name, /\bDROP\s+VIEW\b[^;]*\bCASCADE\b/i.test(sql)]).toEqual([name, false]);
    }
  });
});

/** True as soon as a session of `paysync migrate` on `database` waits for a lock; false once `done`. */
async function migrateBlocked(
  admin: pg.Client,
  database: string,
  done: { value: boolean },
): Promise<boolean> {
  while (!done.value) {
    const { rowCount } = await admin.query(
      `SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE NOT l.granted AND a.datname = $1 AND a.application_name = 'paysync migrate'`,
      [database],
    );
    if (rowCount) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

describe('migrate on a database whose views are in use', () => {
  let db: TestDatabase;
  let reader: pg.Client;
  let admin: pg.Client;
  beforeAll(async () => {
    db = await createTestDatabase('views_locks');
    reader = await connected(db.url);
    admin = await connected(db.url);
  });
  afterAll(async () => {
    await reader.end();
    await admin.end();
    await db.drop();
  });

  /**
   * migrate's outcome, or 'blocked' as soon as it waits for a lock; `run` settles once migrate has
   * finished (after the lock is released) and the watch has stopped.
   */
  async function migrateUnlessBlocked(sqlDir?: string) {
    const done = { value: false };
    const migrated = migrate(db.url, sqlDir ? { sqlDir } : {}).finally(() => (done.value = true));
    const blocked = migrateBlocked(admin, db.name, done).then((found): Promise<MigrateResult | 'blocked'> =>
      found ? Promise.resolve('blocked') : migrated,
    );
    const outcome = await Promise.race([migrated, blocked]);
    const run = Promise.all([migrated, blocked]).then(([result]) => result);
    return { outcome, run };
  }

  it('with nothing to do, takes no lock on any view: it completes while another session holds them all', async () => {
    const { rows } = await reader.query<{ view: string }>(
      "SELECT quote_ident(table_name) AS view FROM information_schema.views WHERE table_schema = 'reporting'",
    );
    await reader.query('BEGIN');
    await reader.query(
      `LOCK TABLE ${rows.map((r) => `reporting.${r.view}`).join(', ')} IN ACCESS EXCLUSIVE MODE`,
    );
    const { outcome, run } = await migrateUnlessBlocked().finally(() => reader.query('ROLLBACK'));
    await run;
    expect(outcome).toMatchObject({ applied: [], views: [] });
  });

  it('with a changed view file, waits for the readers of that view, then applies that file alone', async () => {
    const dir = await sqlCopy();
    await appendFile(join(dir, 'views', 'open_rejects.sql'), '\n-- a changed file\n');
    await reader.query('BEGIN');
    await reader.query('SELECT * FROM reporting.open_rejects LIMIT 1'); // holds the view until COMMIT
    const { outcome, run } = await migrateUnlessBlocked(dir);
    expect(outcome).toBe('blocked');
    await reader.query('COMMIT');
    expect(await run).toMatchObject({ applied: [], views: ['open_rejects.sql'] });
    const [view] = await readViews(dir).then((views) => views.filter((v) => v.view === 'open_rejects'));
    const ledger = await db.pool.query(
      "SELECT checksum FROM public.paysync_views WHERE name = 'open_rejects.sql'",
    );
    expect(ledger.rows).toEqual([{ checksum: view?.checksum }]);
    expect(await migrate(db.url, { sqlDir: dir })).toMatchObject({ views: [] });
  });
});

describe('a view change CREATE OR REPLACE cannot make', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('views_retype');
  });
  afterAll(async () => db.drop());

  const timesSeenType = async () =>
    (
      await db.pool.query<{ type: string }>(
        `SELECT data_type AS type FROM information_schema.columns
          WHERE table_schema = 'reporting' AND table_name = 'open_rejects' AND column_name = 'times_seen'`,
      )
    ).rows[0]?.type;

  it('is refused with the rule, changes nothing, and goes through once a numbered migration drops the view', async () => {
    const dir = await sqlCopy();
    const rejects = join(dir, 'views', 'open_rejects.sql');
    await writeFile(
      rejects,
      (await readFile(rejects, 'utf8')).replace('r.times_seen,', 'r.times_seen::text AS times_seen,'),
    );
    const refused = migrate(db.url, { sqlDir: dir });
    await expect(refused).rejects.toBeInstanceOf(MigrationError);
    await expect(migrate(db.url, { sqlDir: dir })).rejects.toThrow(
      /sql\/views\/open_rejects\.sql failed: cannot change data type .*in a new numbered migration first/,
    );
    expect(await timesSeenType()).toBe('integer');

    // An analyst's view on it stops the drop (never CASCADE), and stays.
    await db.pool.query(
      'CREATE SCHEMA analyst; CREATE VIEW analyst.rejects AS SELECT * FROM reporting.open_rejects',
    );
    await writeFile(
      join(dir, '900_open_rejects_times_seen_text.sql'),
      'DROP VIEW IF EXISTS reporting.open_rejects;\n',
    );
    await expect(migrate(db.url, { sqlDir: dir })).rejects.toThrow(
      /900_open_rejects_times_seen_text\.sql failed: cannot drop view .*analyst\.rejects depends/,
    );
    expect(await timesSeenType()).toBe('integer');

    await db.pool.query('DROP VIEW analyst.rejects'); // its owner drops it around the release
    expect(await migrate(db.url, { sqlDir: dir })).toMatchObject({
      applied: ['900_open_rejects_times_seen_text.sql'],
      views: ['open_rejects.sql'],
    });
    expect(await timesSeenType()).toBe('text');
  });
});

describe('new view files', () => {
  it('are created in dependency order, a view after the one it reads whatever their names', async () => {
    const dir = await sqlCopy();
    await writeFile(
      join(dir, 'views', 'a_open_reject_reasons.sql'),
      `CREATE OR REPLACE VIEW reporting.a_open_reject_reasons AS
       SELECT reason, count(*) AS rejects FROM reporting.z_open_payment_rejects GROUP BY reason;\n`,
    );
    await writeFile(
      join(dir, 'views', 'z_open_payment_rejects.sql'),
      `CREATE OR REPLACE VIEW reporting.z_open_payment_rejects AS
       SELECT * FROM reporting.open_rejects WHERE stream = 'payments';\n`,
    );
    const db = await createTestDatabase('views_new');
    try {
      expect(await migrate(db.url, { sqlDir: dir })).toMatchObject({
        applied: [],
        views: ['z_open_payment_rejects.sql', 'a_open_reject_reasons.sql'],
      });
      const { rows } = await db.pool.query('SELECT * FROM reporting.a_open_reject_reasons');
      expect(rows).toEqual([]);
    } finally {
      await db.drop();
    }
  });
});
