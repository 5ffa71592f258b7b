/**
 * What people run daily, timed against one history database: the idle live ticks (payments, and
 * transfers as the worker runs them beside it), a day's export, the reconcile of a day (one where every
 * record differs, one that matches), the status gathering, the sync-health view and the daily-totals
 * view (the last week, and one day). Each is run a few times; the median counts. A simulator serves the
 * last three days (the same at every history size), so the ticks and the reconcile read the same from
 * the service. Medians of 3 runs (2 for the export: the last two days, each exported once), 25 for the
 * queries that take milliseconds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Queue } from 'bullmq';
import { parseSettings } from '../src/config/settings.js';
import { silentLogger } from '../src/log.js';
import { createRuntime } from '../src/runtime.js';
import { startSimulator } from '../src/sim/server.js';
import { tickPayments, tickTransfers } from '../src/sync/tick.js';
import { exportDay } from '../src/reconcile/export-day.js';
import { reconcileDay } from '../src/reconcile/reconcile.js';
import { gatherStatus } from '../src/ops/status-data.js';
import { createQueue } from '../jobs/queue.js';

export const MEASURES = [
  'idle tick',
  'idle transfers tick',
  "a day's export",
  'reconcile of a day',
  'reconcile, a day that matches',
  'status',
  'sync_health view',
  'daily_totals, last 7 days',
  'daily_totals, one day',
] as const;
export type Measure = (typeof MEASURES)[number];

export interface HistoryFigures {
  seconds: Record<Measure, number>;
  payments: number;
  databaseBytes: number;
}

/** Millisecond-scale queries vary run to run on a shared machine: their median is taken over more runs. */
const FAST_RUNS = 25;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - started) / 1e9;
}

async function repeat(times: number, fn: (i: number) => Promise<unknown>): Promise<number> {
  const runs: number[] = [];
  for (let i = 0; i < times; i++) runs.push(await timed(() => fn(i)));
  return median(runs);
}

const dayBefore = (n: number) => new Date(Date.now() - n * 86_400_000).toISOString().slice(0, 10);

export async function measureHistory(databaseUrl: string, runs = 3): Promise<HistoryFigures> {
  const sim = await startSimulator({ seed: 11, days: 3, perDay: 2_000, clock: 'real' });
  const org = sim.organisations[0] as string;
  const exportRoot = mkdtempSync(join(tmpdir(), 'paysync-history-exports-'));
  const prefix = `paysync-history-${randomBytes(3).toString('hex')}`;
  const runtime = await createRuntime(
    parseSettings({
      PAYMENTS_BASE_URL: sim.url,
      PAYMENTS_API_KEY: sim.keys.organisation[org] as string,
      DATABASE_URL: databaseUrl,
      PAYSYNC_QUEUE_PREFIX: prefix,
      UPSTREAM_RPS: '2000',
      PAGE_SIZE: '1000',
      EXPORT_DIR: exportRoot,
    }),
    { log: silentLogger },
  );
  const queue = createQueue(runtime.redis, prefix);
  try {
    const source = runtime.settings.sources[0]!;
    const deps = runtime.syncContext(source);
    await tickPayments(deps); // first tick: rebuilds the checkpoint, loads the simulator's days
    await tickTransfers(deps); // first transfers tick: a full scan of the simulator's list
    const seconds = {} as Record<Measure, number>;
    seconds['idle tick'] = await repeat(runs, async () => {
      // steady state: the live checkpoint near now, as after the previous tick
      await runtime.checkpoints.reset('default', 'payments', new Date(Date.now() - 120_000));
      await tickPayments(deps);
    });
    // what the worker runs for transfers every SYNC_EVERY beside the payments tick
    seconds['idle transfers tick'] = await repeat(runs, () => tickTransfers(deps));
    // A first export of each of the last two days, into a fresh folder each time (no previous version).
    seconds["a day's export"] = await repeat(2, async (i) => {
      const dir = mkdtempSync(join(exportRoot, 'run-'));
      await exportDay({ ...runtime, settings: { ...runtime.settings, EXPORT_DIR: dir } }, dayBefore(1 + i));
    });
    // Yesterday: 100k generated payments the simulator does not list, so every one is a difference
    // (read whole, compared record by record, recorded). Today: only what the simulator serves, synced
    // by the ticks above, so the service's totals and the warehouse agree (the usual daily case).
    seconds['reconcile of a day'] = await repeat(runs, () => reconcileDay(runtime, dayBefore(1)));
    seconds['reconcile, a day that matches'] = await repeat(runs, () => reconcileDay(runtime, dayBefore(0)));
    seconds.status = await repeat(FAST_RUNS, () =>
      gatherStatus({
        pool: runtime.pool,
        checkpoints: runtime.checkpoints,
        sources: runtime.settings.sources,
        queue: queue as unknown as Queue,
      }),
    );
    seconds['sync_health view'] = await repeat(FAST_RUNS, () =>
      runtime.pool.query('SELECT * FROM reporting.sync_health'),
    );
    seconds['daily_totals, last 7 days'] = await repeat(FAST_RUNS, () =>
      runtime.pool.query('SELECT * FROM reporting.daily_totals WHERE day >= $1', [dayBefore(7)]),
    );
    seconds['daily_totals, one day'] = await repeat(FAST_RUNS, () =>
      runtime.pool.query('SELECT * FROM reporting.daily_totals WHERE day = $1', [dayBefore(1)]),
    );
    const { rows } = await runtime.pool.query<{ payments: number; bytes: number }>(
      `SELECT (SELECT count(*) FROM reporting.payments) AS payments,
              pg_database_size(current_database()) AS bytes`,
    );
    return { seconds, payments: rows[0]!.payments, databaseBytes: rows[0]!.bytes };
  } finally {
    await queue.close();
    const keys = await runtime.redis.keys(`${prefix}*`);
    if (keys.length) await runtime.redis.del(...keys);
    await runtime.close();
    await sim.stop();
    rmSync(exportRoot, { recursive: true, force: true });
  }
}
