/**
 * Reliability drills (short versions): PostgreSQL losing paysync's connections mid-backfill, a key revoked
 * mid-run while another source carries on, and overlapping backfills racing a live tick. Each ends in the
 * same check: the warehouse equals the simulator, record by record.
 */
import { describe, expect, it } from '@jest/globals';
import { cleanupsAfterEach } from '../helpers/cleanups.js';
import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSettings } from '../../src/config/settings.js';
import { silentLogger } from '../../src/log.js';
import { createRuntime } from '../../src/runtime.js';
import { planBackfill } from '../../src/sync/backfill.js';
import { enqueueBackfill } from '../../jobs/backfill-queue.js';
import { tickPayments } from '../../src/sync/tick.js';
import { createPool } from '../../src/warehouse/pool.js';
import { startWorker } from '../../jobs/start-worker.js';
import { backfillDays, sleep, waitForBackfill } from '../helpers/backfill.js';
import { paymentDifferences, startHarness, type Harness } from '../helpers/sync-harness.js';

let h: Harness | null = null;
const cleanups = cleanupsAfterEach(async () => {
  await h?.close();
  h = null;
});

describe('PostgreSQL outage', () => {
  it("jobs retry and complete when paysync's connections are terminated mid-backfill; no partial page", async () => {
    h = await startHarness({
      name: 'pgkill',
      sim: { days: 5, perDay: 150, switches: { slowRate: 1, slowMs: 15 } },
    });
    const worker = await startWorker(h.runtime, { schedules: false });
    cleanups.push(() => worker.close());
    const [from, to] = backfillDays(h);
    const jobs = planBackfill(h.settings, h.settings.sources, from, to, ['payments']);
    await enqueueBackfill(worker.queue, jobs);
    const admin = createPool('postgres://postgres@127.0.0.1:5432/postgres', { max: 1 });
    cleanups.push(() => admin.end());
    const database = new URL(h.databaseUrl).pathname.slice(1);
    let terminated = 0;
    for (let i = 0; i < 6; i++) {
      await sleep(150);
      const { rowCount } = await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [database],
      );
      terminated += rowCount ?? 0;
    }
    h.sim.setSwitches({ slowRate: 0 });
    const progress = await waitForBackfill(worker.queue, jobs, 90_000);
    expect(terminated).toBeGreaterThan(0);
    expect(progress.failed).toEqual([]);
    expect(await paymentDifferences(h)).toEqual([]);
  });
});

describe('a key revoked mid-run', () => {
  it("stops that source with the service's message, leaves its checkpoint, and the other source carries on", async () => {
    h = await startHarness({ name: 'revoke', sim: { organisations: 2 } });
    const [orgA, orgB] = h.sim.organisations as [string, string];
    const file = join(tmpdir(), `paysync-sources-${process.pid}-${Date.now()}.json`);
    writeFileSync(
      file,
      JSON.stringify([
        { name: 'alpha', baseUrl: h.sim.url, apiKeyEnv: 'DRILL_KEY_A', scope: 'organisation' },
        { name: 'beta', baseUrl: h.sim.url, apiKeyEnv: 'DRILL_KEY_B', scope: 'organisation' },
      ]),
    );
    const settings = parseSettings({
      PAYSYNC_SOURCES_FILE: file,
      DRILL_KEY_A: h.sim.keys.organisation[orgA],
      DRILL_KEY_B: h.sim.keys.organisation[orgB],
      DATABASE_URL: h.databaseUrl,
      PAYSYNC_QUEUE_PREFIX: h.prefix,
      SYNC_START: h.settings.SYNC_START,
      UPSTREAM_RPS: '2000',
    });
    const runtime = await createRuntime(settings, {
      log: silentLogger,
      now: () => h!.sim.now(),
      backoff: { baseMs: 5 },
    });
    cleanups.push(() => runtime.close());
    const [alpha, beta] = settings.sources as [(typeof settings.sources)[0], (typeof settings.sources)[0]];
    await tickPayments(runtime.syncContext(alpha));
    const before = (await runtime.checkpoints.get('alpha', 'payments')).checkpoint;
    h.sim.revokeKey(h.sim.keys.organisation[orgA] as string);
    h.sim.advance(3600_000);
    h.sim.clearRequestLog();
    await expect(tickPayments(runtime.syncContext(alpha))).rejects.toThrow(/401 Invalid or missing API key/);
    expect(h.sim.requestLog().length).toBe(1); // no retry storm
    expect((await runtime.checkpoints.get('alpha', 'payments')).checkpoint).toEqual(before);
    const other = await tickPayments(runtime.syncContext(beta));
    expect(other.windows.every((w) => w.outcome === 'complete')).toBe(true);
    const { rows } = await runtime.pool.query(
      `SELECT count(*)::int AS n FROM reporting.payments WHERE source = 'beta'`,
    );
    expect(rows[0].n).toBe(h.sim.payments(orgB).length);
  });
});

describe('concurrency', () => {
  it('two overlapping backfills and a live tick at once equal a single run', async () => {
    h = await startHarness({ name: 'overlap', sim: { days: 5 } });
    const workers = [await startWorker(h.runtime, { schedules: false })];
    const second = await createRuntime(h.settings, { log: silentLogger, now: () => h!.sim.now() });
    cleanups.push(() => second.close());
    workers.push(await startWorker(second, { schedules: false }));
    for (const w of workers) cleanups.push(() => w.close());
    const [from, to] = backfillDays(h);
    const middle = new Date(h.sim.now().getTime() - 2 * 86_400_000).toISOString().slice(0, 10);
    const a = planBackfill(h.settings, h.settings.sources, from, middle, ['payments', 'transfers']);
    const b = planBackfill(h.settings, h.settings.sources, middle, to, ['payments']);
    await Promise.all([
      enqueueBackfill(workers[0]!.queue, a),
      enqueueBackfill(workers[1]!.queue, b),
      tickPayments(h.runtime.syncContext(h.settings.sources[0]!)),
    ]);
    const unique = [...new Map([...a, ...b].map((j) => [j.id, j])).values()];
    const progress = await waitForBackfill(workers[0]!.queue, unique);
    expect(progress.failed).toEqual([]);
    expect(await paymentDifferences(h)).toEqual([]);
    const doubled = await h.runtime.pool.query(
      'SELECT id FROM reporting.payments GROUP BY id HAVING count(*) > 1',
    );
    expect(doubled.rows).toEqual([]);
  });
});
