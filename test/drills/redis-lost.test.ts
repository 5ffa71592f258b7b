/**
 * Redis loss drills on a private redis-server (never the shared one): killed with SIGKILL and started
 * again empty (no persistence) after an outage `backfill --wait` has seen, emptied by FLUSHALL mid-backfill,
 * and restarted between two live ticks. Workers reconnect on their own and re-fill the queue from
 * PostgreSQL, `backfill --wait` (a real CLI process reading its progress from PostgreSQL) carries on and
 * exits 0 with nobody re-running anything, and the live checkpoint is rebuilt from the sync log. Each ends
 * in the same check: the warehouse equals the simulator, record by record, nothing doubled.
 *
 * The outage lasts REDIS_OUTAGE_S seconds as `--wait` reports it (default 3; the 30 s drill sets 30).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';
import { silentLogger } from '../../src/log.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { planBackfill } from '../../src/sync/backfill.js';
import { getBackfill } from '../../src/warehouse/backfill-store.js';
import { enqueueBackfill } from '../../jobs/backfill-queue.js';
import { tickPayments } from '../../src/sync/tick.js';
import { syncStart } from '../../src/sync/tick-plan.js';
import { localDayOf } from '../../src/sync/windows.js';
import { startWorker, type RunningWorker } from '../../jobs/start-worker.js';
import { backfillDays, sleep, waitForBackfill } from '../helpers/backfill.js';
import { harnessEnv, startCli, type CliChild } from '../helpers/cli-child.js';
import {
  paymentDifferences,
  startHarness,
  transferDifferences,
  type Harness,
} from '../helpers/sync-harness.js';

/** A redis-server of this test's own, on a fixed port so that a restart keeps the URL. */
class PrivateRedis {
  private child: ChildProcess | null = null;
  constructor(readonly port: number) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  async start(): Promise<void> {
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--daemonize',
        'no',
      ],
      { stdio: 'ignore' },
    );
    this.child = child;
    const probe = new Redis(this.url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    try {
      for (let i = 0; ; i++) {
        try {
          await probe.connect();
          await probe.ping();
          return;
        } catch (error) {
          if (child.exitCode !== null || i > 100)
            throw new Error(`redis-server did not start: ${String(error)}`);
          probe.disconnect();
          await sleep(50);
        }
      }
    } finally {
      probe.disconnect();
    }
  }

  /** SIGKILL: no shutdown, no save; everything in memory is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Restarts Redis empty, then waits until a connection opened before the crash answers again by itself. */
async function restartRedis(redis: PrivateRedis, survivors: readonly Redis[]): Promise<void> {
  await redis.kill();
  await sleep(300); // long enough for every client to notice the lost connection
  await redis.start();
  for (const connection of survivors) {
    expect(await connection.ping()).toBe('PONG'); // ioredis reconnected on its own
    expect(await connection.dbsize()).toBeGreaterThanOrEqual(0);
  }
}

let h: Harness | null = null;
let redis: PrivateRedis | null = null;
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await h?.close(); // needs Redis up: it deletes its keys there
  h = null;
  await redis?.kill();
  redis = null;
});

/** A harness on a private Redis; live sync starts `liveDays` days back when given (else the harness's). */
async function startWithPrivateRedis(
  name: string,
  sim: Parameters<typeof startHarness>[0]['sim'],
  liveDays?: number,
) {
  redis = new PrivateRedis(await freePort());
  await redis.start();
  const env: Record<string, string> = { REDIS_URL: redis.url, JOB_LOCK: '2s', SYNC_LOOKBACK: '1d' };
  if (liveDays !== undefined)
    env.SYNC_START = localDayOf(new Date(Date.now() - liveDays * 86_400_000), 'UTC');
  h = await startHarness({ name, sim, env });
  expect(h.settings.REDIS_URL).toBe(redis.url);
  return h;
}

async function doubledIds(runtime: Runtime): Promise<unknown[]> {
  const { rows } = await runtime.pool.query(
    'SELECT id FROM reporting.payments GROUP BY id HAVING count(*) > 1',
  );
  return rows;
}

/** Runs a backfill of [from, to] on the given workers' queue and waits for it. */
async function runBackfill(harness: Harness, worker: RunningWorker, from: string, to: string) {
  const jobs = planBackfill(harness.settings, harness.settings.sources, from, to, ['payments', 'transfers']);
  await enqueueBackfill(worker.queue, jobs);
  return jobs;
}

const day = (harness: Harness, daysAgo: number) =>
  localDayOf(new Date(harness.sim.now().getTime() - daysAgo * 86_400_000), 'UTC');

/** The tick resumed near the old checkpoint (a lookback's worth of re-reading), not at SYNC_START. */
function expectRebuilt(harness: Harness, from: Date, checkpoint: Date): void {
  const start = syncStart(harness.settings, harness.sim.now());
  expect(from.getTime()).toBeGreaterThan(start.getTime());
  expect(from.getTime()).toBeLessThanOrEqual(checkpoint.getTime()); // nothing after the old checkpoint skipped
  // the log vouches for a window up to when it was read: within a minute of the lost checkpoint
  expect(Math.abs(from.getTime() - (checkpoint.getTime() - harness.settings.SYNC_LOOKBACK))).toBeLessThan(
    60_000,
  );
}

/** `backfill --from --to --wait` as a CLI process; resolves once it has recorded the backfill (its id). */
async function startBackfillWait(harness: Harness, from: string, to: string) {
  const child = startCli(['backfill', '--from', from, '--to', to, '--wait'], harnessEnv(harness));
  cleanups.push(() => child.kill());
  await child.waitForStderr('waits for:');
  const id = Number(/backfill #(\d+)/.exec(child.stdout())?.[1]);
  expect(id).toBeGreaterThan(0);
  return { child, id };
}

/** Polls PostgreSQL until the backfill has at least one item done (while others remain, checked by the caller). */
async function firstItemDone(harness: Harness, id: number) {
  for (let i = 0; i < 2_400; i++) {
    const b = await getBackfill(harness.runtime.pool, id);
    if (b && b.done > 0) return b;
    await sleep(25);
  }
  throw new Error(`backfill #${id} finished no item`);
}

/** Waits until `--wait` has reported Redis unreachable for at least `seconds` (an observed event). */
async function outageSeen(child: CliChild, seconds: number) {
  for (let i = 0; i < 4_000; i++) {
    const all = [...child.stderr().matchAll(/Redis unreachable since \S+ \((?:(\d+)m )?(\d+)s\)/g)];
    const last = all.at(-1);
    if (last && Number(last[1] ?? 0) * 60 + Number(last[2]) >= seconds) return;
    if (child.process.exitCode !== null)
      throw new Error(`--wait exited during the outage: ${child.stderr()}`);
    await sleep(50);
  }
  throw new Error(`--wait never reported the outage: ${child.stderr().slice(-2_000)}`);
}

const OUTAGE_S = Number(process.env.REDIS_OUTAGE_S ?? 3);

async function workersOn(harness: Harness, runtimes: Runtime[]) {
  const workers: RunningWorker[] = [];
  for (const runtime of runtimes) {
    const w = await startWorker(runtime, { schedules: false, concurrency: 1 });
    w.queue.on('error', () => undefined); // connection errors while Redis is down are expected
    workers.push(w);
    cleanups.push(() => w.close());
  }
  return workers;
}

describe('Redis lost mid-backfill: PostgreSQL knows what remains', () => {
  it('killed, unreachable while --wait watches, restarted empty: workers re-fill the queue and --wait exits 0', async () => {
    // live sync covers the last two days; the backfill brings in the history before SYNC_START
    const harness = await startWithPrivateRedis(
      'redisrestart',
      { days: 6, perDay: 100, switches: { slowRate: 1, slowMs: 25 } },
      2,
    );
    const source = harness.settings.sources[0]!;
    const first = await tickPayments(harness.runtime.syncContext(source));
    expect(first.checkpoint).not.toBeNull();
    harness.sim.advance(3_600_000);

    const second = await createRuntime(harness.settings, { log: silentLogger, now: () => harness.sim.now() });
    cleanups.push(() => second.close());
    const { child, id } = await startBackfillWait(harness, day(harness, 7), day(harness, 3));
    const workers = await workersOn(harness, [harness.runtime]); // one window at a time until the crash
    const atCrash = await firstItemDone(harness, id);
    expect(atCrash.done).toBeLessThan(atCrash.total);
    await redis!.kill();
    await outageSeen(child, OUTAGE_S); // --wait keeps going and says why it waits
    expect(child.stderr()).toContain('workers re-queue this backfill from PostgreSQL when it is back');
    await redis!.start();
    expect(await harness.runtime.redis.ping()).toBe('PONG'); // ioredis reconnected on its own
    workers.push(...(await workersOn(harness, [second])));

    harness.sim.setSwitches({ slowRate: 0 });
    expect(await child.exited).toBe(0);
    expect(child.stdout()).toContain(`backfill done: #${id} done`);
    for (const w of workers) expect(w.worker.isRunning()).toBe(true);

    const tick = await tickPayments(harness.runtime.syncContext(source));
    expectRebuilt(harness, tick.from, first.checkpoint!);
    expect(tick.windows.every((w) => w.outcome === 'complete')).toBe(true);
    expect(await paymentDifferences(harness)).toEqual([]);
    expect(await transferDifferences(harness)).toEqual([]);
    expect(await doubledIds(harness.runtime)).toEqual([]);
  });

  it('FLUSHALL mid-backfill: the queue is re-filled from PostgreSQL and --wait exits 0', async () => {
    const harness = await startWithPrivateRedis('redisflush', {
      days: 6,
      perDay: 100,
      switches: { slowRate: 1, slowMs: 25 },
    });
    const { child, id } = await startBackfillWait(harness, ...backfillDays(harness));
    const workers = await workersOn(harness, [harness.runtime]);
    const atFlush = await firstItemDone(harness, id);
    expect(atFlush.done).toBeLessThan(atFlush.total);
    await harness.runtime.redis.flushall(); // our own redis-server: nothing else lives there
    expect(await workers[0]!.queue.count()).toBe(0);
    harness.sim.setSwitches({ slowRate: 0 });
    expect(await child.exited).toBe(0);
    expect(child.stdout()).toContain(`backfill done: #${id} done`);
    expect(await paymentDifferences(harness)).toEqual([]);
    expect(await transferDifferences(harness)).toEqual([]);
    expect(await doubledIds(harness.runtime)).toEqual([]);
  });
});

describe('Redis killed and restarted empty', () => {
  it('between ticks: the checkpoint is rebuilt from the sync log, not from SYNC_START, and nothing is lost', async () => {
    const harness = await startWithPrivateRedis('redistick', { days: 5 });
    const deps = harness.runtime.syncContext(harness.settings.sources[0]!);
    const first = await tickPayments(deps);
    expect(first.checkpoint).not.toBeNull();
    await restartRedis(redis!, [harness.runtime.redis]);
    expect(await harness.runtime.checkpoints.isMissing('default', 'payments')).toBe(true);
    harness.sim.advance(3_600_000);
    const second = await tickPayments(deps);
    expectRebuilt(harness, second.from, first.checkpoint!);
    expect(second.checkpoint!.getTime()).toBeGreaterThanOrEqual(first.checkpoint!.getTime());
    expect(second.windows.every((w) => w.outcome === 'complete')).toBe(true);
    expect(await paymentDifferences(harness)).toEqual([]);
    expect(await doubledIds(harness.runtime)).toEqual([]);
  });

  // A backfill over the live range must not overwrite the live windows' kind in the sync log: a lost
  // checkpoint would then restart at SYNC_START. The log keeps a live window live.
  it('after a backfill over the live range, the checkpoint is still rebuilt from the sync log', async () => {
    const harness = await startWithPrivateRedis('redisoverlap', { days: 3 });
    const deps = harness.runtime.syncContext(harness.settings.sources[0]!);
    const first = await tickPayments(deps);
    const worker = await startWorker(harness.runtime, { schedules: false });
    cleanups.push(() => worker.close());
    const jobs = await runBackfill(harness, worker, ...backfillDays(harness));
    expect((await waitForBackfill(worker.queue, jobs)).failed).toEqual([]);
    await worker.close(); // only the sync log matters from here
    await restartRedis(redis!, [harness.runtime.redis]);
    harness.sim.advance(3_600_000);
    const second = await tickPayments(deps);
    expectRebuilt(harness, second.from, first.checkpoint!);
  });
});
