/**
 * Every command through a transaction pooler: a local PgBouncer (pool_mode = transaction) between
 * paysync and PostgreSQL, where consecutive transactions of one client may run on different server
 * sessions, so nothing may rely on a session (session advisory locks, session settings).
 * - `paysync migrate`: three at once on a new database, five rounds; each migration is applied exactly
 *   once and every process exits 0 (a session lock let them collide: duplicate pg_type rows);
 * - `paysync sync`, `export` (twice at once: one pack version), `reconcile` and `status`, all through
 *   PgBouncer: the warehouse equals the simulator's truth and the pack is written.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { defaultSqlDir, readMigrations } from '../../src/warehouse/migration-files.js';
import { maintenanceUrl } from '../../src/warehouse/migrate.js';
import { startPgBouncer, type PgBouncer } from '../helpers/pgbouncer.js';
import { run } from '../helpers/processes.js';
import { uniqueName, SERVER_URL } from '../helpers/db.js';
import {
  paymentDifferences,
  startHarness,
  transferDifferences,
  type Harness,
} from '../helpers/sync-harness.js';

const BIN = resolve(import.meta.dirname, '../../bin/paysync.js');

let bouncer: PgBouncer;
beforeAll(async () => {
  bouncer = await startPgBouncer();
});
afterAll(async () => {
  await bouncer?.stop();
});

function paysync(args: string[], env: Record<string, string>) {
  return run(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
  });
}

async function dropDatabase(name: string): Promise<void> {
  const admin = new pg.Client({ connectionString: maintenanceUrl(SERVER_URL) });
  await admin.connect();
  await admin.query(`DROP DATABASE IF EXISTS ${admin.escapeIdentifier(name)} WITH (FORCE)`);
  await admin.end();
}

describe('paysync migrate through PgBouncer in transaction mode', () => {
  it('three at once on a new database apply each migration exactly once, five rounds in a row', async () => {
    const files = (await readMigrations(defaultSqlDir())).map((f) => f.name);
    for (let round = 1; round <= 5; round++) {
      const name = uniqueName(`bouncer_migrate_${round}`);
      try {
        const env = { DATABASE_URL: bouncer.urlFor(name) };
        const results = await Promise.all([1, 2, 3].map(() => paysync(['migrate'], env)));
        expect(results.map((r) => ({ round, code: r.code, stderr: r.stderr }))).toEqual(
          results.map(() => ({ round, code: 0, stderr: '' })),
        );
        const direct = new pg.Client({ connectionString: new URL(`/${name}`, SERVER_URL).toString() });
        await direct.connect();
        const { rows } = await direct.query<{ name: string }>(
          'SELECT name FROM public.paysync_migrations ORDER BY name',
        );
        await direct.end();
        expect(rows.map((r) => r.name)).toEqual(files);
      } finally {
        await dropDatabase(name);
      }
    }
  }, 300_000);
});

describe('sync, export, reconcile and status through PgBouncer in transaction mode', () => {
  let h: Harness | undefined;
  let exportDir: string | undefined;
  afterAll(async () => {
    await h?.close();
    if (exportDir) rmSync(exportDir, { recursive: true, force: true });
  });

  it('loads what the service has and writes one pack version when two exports race', async () => {
    h = await startHarness({ name: 'bouncer', sim: { clock: 'real', days: 2, perDay: 60 } });
    exportDir = mkdtempSync(join(tmpdir(), 'paysync-bouncer-exports-'));
    const env = {
      PAYMENTS_BASE_URL: h.sim.url,
      PAYMENTS_API_KEY: h.key,
      DATABASE_URL: bouncer.urlFor(new URL(h.databaseUrl).pathname.slice(1)),
      PAYSYNC_QUEUE_PREFIX: h.prefix,
      SYNC_START: h.settings.SYNC_START ?? '',
      UPSTREAM_RPS: '2000',
      EXPORT_DIR: exportDir,
    };
    const sync = await paysync(['sync', '--once'], env);
    expect({ code: sync.code, stderr: sync.code === 0 ? '' : sync.stderr }).toEqual({ code: 0, stderr: '' });
    expect(await paymentDifferences(h)).toEqual([]);
    expect(await transferDifferences(h)).toEqual([]);

    const day = new Date(h.sim.now().getTime() - 86_400_000).toISOString().slice(0, 10);
    const exports = await Promise.all([1, 2].map(() => paysync(['export', '--day', day], env)));
    expect(exports.map((r) => ({ code: r.code, stderr: r.stderr }))).toEqual([
      { code: 0, stderr: '' },
      { code: 0, stderr: '' },
    ]);
    // Serialised on the day lock: the second found the first's pack and the same content.
    expect(readdirSync(join(exportDir, day)).filter((f) => /^v\d+$/.test(f))).toEqual(['v1']);

    const reconcile = await paysync(['reconcile', '--day', day], env);
    expect({ code: reconcile.code, stderr: reconcile.stderr }).toEqual({ code: 0, stderr: '' });
    const status = await paysync(['status'], env);
    expect({ code: status.code, stderr: status.stderr }).toEqual({ code: 0, stderr: '' });
    expect(status.stdout).toContain('payments');
  }, 300_000);
});
