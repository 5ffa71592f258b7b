import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, expect, afterAll } from '@jest/globals';
import pg from 'pg';
import { MigrationError } from '../src/errors.js';
import { FINAL_PAYMENT_STATUSES, FINAL_TRANSFER_STATUSES } from '../src/upstream/schemas.js';
import { migrate } from '../src/warehouse/migrate.js';
import { defaultSqlDir, readMigrations } from '../src/warehouse/migration-files.js';
import { dropDatabase, uniqueName, urlFor } from './helpers/db.js';

const created: string[] = [];
const fresh = (prefix: string): string => {
  const name = uniqueName(prefix);
  created.push(name);
  return name;
};

afterAll(async () => {
  for (const name of created) await dropDatabase(name);
});

async function tables(url: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'reporting' ORDER BY 1",
    );
    return rows.map((r) => r.name);
  } finally {
    await client.end();
  }
}

describe('paysync migrate', () => {
  it('creates a missing database, applies every file, and a second run is a no-op', async () => {
    const url = urlFor(fresh('mig_fresh'));
    const files = await readMigrations(defaultSqlDir());
    const first = await migrate(url);
    expect(first).toEqual({ applied: files.map((f) => f.name), alreadyApplied: 0 });
    expect(await tables(url)).toEqual(
      expect.arrayContaining(['payments', 'transfers', 'sync_rejects', 'sync_windows', 'daily_totals']),
    );
    expect(await migrate(url)).toEqual({ applied: [], alreadyApplied: files.length });
  });

  it('refuses to run when an applied migration file has changed, naming the file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'paysync-sql-'));
    try {
      await cp(defaultSqlDir(), dir, { recursive: true });
      const url = urlFor(fresh('mig_changed'));
      await migrate(url, { sqlDir: dir });
      const file = join(dir, '002_status_history.sql');
      await writeFile(file, `${await readFile(file, 'utf8')}\n-- edited after the fact\n`);
      const run = migrate(url, { sqlDir: dir });
      await expect(run).rejects.toBeInstanceOf(MigrationError);
      await expect(migrate(url, { sqlDir: dir })).rejects.toThrow(/002_status_history\.sql was changed/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('is safe when several processes start it at once on a missing database', async () => {
    const url = urlFor(fresh('mig_race'));
    const files = await readMigrations(defaultSqlDir());
    const results = await Promise.all([migrate(url), migrate(url), migrate(url)]);
    const applied = results.flatMap((r) => r.applied).sort();
    expect(applied).toEqual(files.map((f) => f.name).sort());
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query('SELECT name FROM public.paysync_migrations');
    await client.end();
    expect(rows).toHaveLength(files.length);
  });

  it('keeps the open-record partial indexes in step with the final statuses of the schemas', async () => {
    const sql = await readFile(join(defaultSqlDir(), '005_indexes.sql'), 'utf8');
    const quoted = (list: readonly string[]) => list.map((s) => `'${s}'`).join(', ');
    expect(sql).toContain(`status NOT IN (${quoted(FINAL_PAYMENT_STATUSES)})`);
    expect(sql).toContain(`status NOT IN (${quoted(FINAL_TRANSFER_STATUSES)})`);
  });
});
