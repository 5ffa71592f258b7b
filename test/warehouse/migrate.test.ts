import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, expect, afterAll } from '@jest/globals';
import pg from 'pg';
import { MigrationError } from '../../src/errors.js';
import { FINAL_PAYMENT_STATUSES, FINAL_TRANSFER_STATUSES } from '../../src/upstream/schemas.js';
import { migrate } from '../../src/warehouse/migrate.js';
import { defaultSqlDir, readMigrations } from '../../src/warehouse/migration-files.js';
import { readViews } from '../../src/warehouse/view-files.js';
import { dropDatabase, uniqueName, urlFor } from '../helpers/db.js';

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

/** A database migrated from a copy of `sql/`, which `use` may edit; the copy is removed after. */
async function withMigratedCopy(
  prefix: string,
  use: (dir: string, url: string) => Promise<void>,
): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'paysync-sql-'));
  try {
    await cp(defaultSqlDir(), dir, { recursive: true });
    const url = urlFor(fresh(prefix));
    await migrate(url, { sqlDir: dir });
    await use(dir, url);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

describe('paysync migrate', () => {
  it('creates a missing database, applies every file and view, and a second run is a no-op', async () => {
    const url = urlFor(fresh('mig_fresh'));
    const files = await readMigrations(defaultSqlDir());
    const views = (await readViews(defaultSqlDir())).map((v) => v.name);
    const first = await migrate(url);
    expect(first).toEqual({ applied: files.map((f) => f.name), alreadyApplied: 0, views });
    expect(await tables(url)).toEqual(
      expect.arrayContaining(['payments', 'transfers', 'sync_rejects', 'sync_windows', 'daily_totals']),
    );
    expect(await migrate(url)).toEqual({ applied: [], alreadyApplied: files.length, views: [] });
  });

  it('refuses to run when an applied migration file has changed, naming the file', async () => {
    await withMigratedCopy('mig_changed', async (dir, url) => {
      const file = join(dir, '002_status_history.sql');
      await writeFile(file, `${await readFile(file, 'utf8')}\n-- edited after the fact\n`);
      const run = migrate(url, { sqlDir: dir });
      await expect(run).rejects.toBeInstanceOf(MigrationError);
      await expect(migrate(url, { sqlDir: dir })).rejects.toThrow(/002_status_history\.sql was changed/);
    });
  });

  it("lets a migration's head comment be reworded, and accepts ledgers that recorded whole files", async () => {
    await withMigratedCopy('mig_head', async (dir, url) => {
      // a reworded head: the same statements
      const file = join(dir, '002_status_history.sql');
      const original = await readFile(file, 'utf8');
      await writeFile(file, ['-- 002, reworded: the status history', original].join('\n'));
      expect((await migrate(url, { sqlDir: dir })).applied).toEqual([]);
      // the ledger as paysync wrote it when a checksum covered the whole file (and 016's before its head
      // was reworded: the checksum HEAD_REWORDED names), with the files as they are now
      await writeFile(file, original);
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        for (const f of await readMigrations(dir)) {
          const whole = f.accepted[f.accepted.length - 1] as string;
          await client.query('UPDATE public.paysync_migrations SET checksum = $2 WHERE name = $1', [
            f.name,
            whole,
          ]);
        }
      } finally {
        await client.end();
      }
      expect((await migrate(url, { sqlDir: dir })).applied).toEqual([]);
      // a statement changed, a comment among the statements included: refused as before
      const lines = original.split('\n');
      const first = lines.findIndex((line) => !line.startsWith('--') && line.trim() !== '');
      lines.splice(first + 1, 0, '-- a comment among the statements is part of them');
      await writeFile(file, lines.join('\n'));
      await expect(migrate(url, { sqlDir: dir })).rejects.toThrow(/002_status_history\.sql was changed/);
    });
  });

  it('is safe when several processes start it at once on a missing database', async () => {
    const url = urlFor(fresh('mig_race'));
    const files = await readMigrations(defaultSqlDir());
    const views = await readViews(defaultSqlDir());
    const results = await Promise.all([migrate(url), migrate(url), migrate(url)]);
    const applied = results.flatMap((r) => r.applied).sort();
    expect(applied).toEqual(files.map((f) => f.name).sort());
    expect(results.flatMap((r) => r.views).sort()).toEqual(views.map((v) => v.name).sort());
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const { rows } = await client.query('SELECT name FROM public.paysync_migrations');
    const ledger = await client.query('SELECT name FROM public.paysync_views');
    await client.end();
    expect(rows).toHaveLength(files.length);
    expect(ledger.rows).toHaveLength(views.length);
  });

  it('009 keeps every published snapshot: the same records read back through reporting.export_snapshot', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'paysync-sql-'));
    const url = urlFor(fresh('mig_snapshot'));
    try {
      const files = await readMigrations(defaultSqlDir());
      for (const f of files.filter((f) => f.number <= 8))
        await cp(join(defaultSqlDir(), f.name), join(dir, f.name));
      await migrate(url, { sqlDir: dir });
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const snapshot = `SELECT day::text, stream, id, status, amount::text, updated_at::text
                          FROM reporting.export_snapshot ORDER BY day, stream, id`;
      try {
        await client.query(
          `INSERT INTO reporting.export_snapshot (day, stream, id, status, amount, updated_at)
           SELECT DATE '2024-02-01' + (g % 3), CASE WHEN g % 2 = 0 THEN 'payments' ELSE 'transfers' END,
                  'id_' || g, CASE WHEN g % 5 = 0 THEN 'PENDING' ELSE 'COMPLETE' END,
                  (g * 1000 + 0.50)::numeric, TIMESTAMPTZ '2024-02-01T10:00:00Z' + g * interval '1 second'
             FROM generate_series(1, 500) g`,
        );
        const before = (await client.query(snapshot)).rows;
        const later = files.filter((f) => f.number >= 9).map((f) => f.name); // 009 and any added since
        expect(await migrate(url)).toMatchObject({ applied: later });
        expect(later[0]).toBe('009_export_snapshot_arrays.sql');
        const after = (await client.query(snapshot)).rows;
        expect(after).toHaveLength(500);
        expect(after).toEqual(before); // amounts keep their exact text (1000.50, not 1000.5)
        expect(after[0]).toMatchObject({ amount: expect.stringMatching(/\.50$/) });
      } finally {
        await client.end();
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('keeps the open-record partial indexes in step with the final statuses of the schemas', async () => {
    const sql = await readFile(join(defaultSqlDir(), '005_indexes.sql'), 'utf8');
    const quoted = (list: readonly string[]) => list.map((s) => `'${s}'`).join(', ');
    expect(sql).toContain(`status NOT IN (${quoted(FINAL_PAYMENT_STATUSES)})`);
    expect(sql).toContain(`status NOT IN (${quoted(FINAL_TRANSFER_STATUSES)})`);
  });
});
