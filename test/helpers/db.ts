/**
 * A fresh, migrated database per test file, copied from a template database (CREATE DATABASE …
 * TEMPLATE is far faster than replaying the migrations). The template is named after the checksum of
 * the sql/ files, numbered migrations and sql/views alike, so a changed migration or view builds a new
 * one; test files run in parallel and serialise the template build and copy on an advisory lock (a
 * template cannot be copied while anyone is connected to it).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { migrate, maintenanceUrl } from '../../src/warehouse/migrate.js';
import { defaultSqlDir, readMigrations, setChecksum } from '../../src/warehouse/migration-files.js';
import { readViews } from '../../src/warehouse/view-files.js';
import { createPool } from '../../src/warehouse/pool.js';

export const SERVER_URL = process.env.TEST_DATABASE_SERVER ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const TEMPLATE_LOCK_KEY = 7_243_002;

export interface TestDatabase {
  url: string;
  name: string;
  pool: pg.Pool;
  drop(): Promise<void>;
}

export function urlFor(name: string): string {
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

/** A unique database name: `paysync_test_<prefix>_<random>` (prefix lowercased to [a-z0-9_]). */
export function uniqueName(prefix: string): string {
  const clean = prefix
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')
    .slice(0, 30);
  return `paysync_test_${clean}_${randomBytes(4).toString('hex')}`;
}

/** The checksum of everything `migrate` applies: the numbered migrations and the view files. */
export async function sqlChecksum(sqlDir = defaultSqlDir()): Promise<string> {
  const views = (await readViews(sqlDir)).map((v) => ({ name: `views/${v.name}`, checksum: v.checksum }));
  return setChecksum([...(await readMigrations(sqlDir)), ...views]);
}

async function ensureTemplate(admin: pg.Client): Promise<string> {
  const checksum = await sqlChecksum();
  const template = `paysync_test_template_${checksum.slice(0, 12)}`;
  const found = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [template]);
  if (found.rowCount) return template;
  const stale = await admin.query<{ datname: string }>(
    "SELECT datname FROM pg_database WHERE datname LIKE 'paysync\\_test\\_template\\_%'",
  );
  for (const { datname } of stale.rows) {
    await admin.query(`DROP DATABASE IF EXISTS ${admin.escapeIdentifier(datname)} WITH (FORCE)`);
  }
  await migrate(urlFor(template));
  return template;
}

/** Creates `name` as a migrated database (from the template) and returns its URL. */
export async function createMigratedDatabase(name: string): Promise<string> {
  const admin = new pg.Client({ connectionString: maintenanceUrl(SERVER_URL) });
  await admin.connect();
  try {
    await admin.query('SELECT pg_advisory_lock($1)', [TEMPLATE_LOCK_KEY]);
    const template = await ensureTemplate(admin);
    await admin.query(
      `CREATE DATABASE ${admin.escapeIdentifier(name)} TEMPLATE ${admin.escapeIdentifier(template)}`,
    );
    return urlFor(name);
  } finally {
    await admin.query('SELECT pg_advisory_unlock($1)', [TEMPLATE_LOCK_KEY]).catch(() => undefined);
    await admin.end();
  }
}

export async function dropDatabase(name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: maintenanceUrl(SERVER_URL) });
  await admin.connect();
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${admin.escapeIdentifier(name)} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

/**
 * A fresh migrated database for one test file; `drop()` closes the pool and removes it (kept when
 * KEEP_TEST_DB is set, so a failing test's data can be inspected).
 */
export async function createTestDatabase(prefix: string): Promise<TestDatabase> {
  const name = uniqueName(prefix);
  const url = await createMigratedDatabase(name);
  const pool = createPool(url, { max: 5, applicationName: `paysync test ${prefix}` });
  return {
    url,
    name,
    pool,
    async drop() {
      await pool.end();
      if (process.env.KEEP_TEST_DB) console.error(`kept test database ${name}`);
      else await dropDatabase(name);
    },
  };
}
