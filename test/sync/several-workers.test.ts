/**
 * Workers and backfills on real BullMQ: several workers share a backfill without doing a window twice,
 * and a worker killed with SIGKILL mid-backfill loses nothing.
 */
import { describe, expect, it } from '@jest/globals';
import { cleanupsAfterEach } from '../helpers/cleanups.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { silentLogger } from '../../src/log.js';
import { createRuntime } from '../../src/runtime.js';
import { planBackfill } from '../../src/sync/backfill.js';
import { enqueueBackfill } from '../../jobs/backfill-queue.js';
import { backfillDays, sleep, waitForBackfill } from '../helpers/backfill.js';
import { startWorker } from '../../jobs/start-worker.js';
import { createQueue } from '../../jobs/queue.js';
import { paymentDifferences, startHarness, type Harness } from '../helpers/sync-harness.js';

let h: Harness | null = null;
const cleanups = cleanupsAfterEach(async () => {
  await h?.close();
  h = null;
});

describe('backfill with several workers', () => {
  it('two workers on one backfill do each window once, to completion', async () => {
    h = await startHarness({ name: 'twoworkers', sim: { days: 5 } });
    const second = await createRuntime(h.settings, { log: silentLogger, now: () => h!.sim.now() });
    cleanups.push(() => second.close());
    const [from, to] = backfillDays(h);
    const jobs = planBackfill(h.settings, h.settings.sources, from, to, ['payments', 'transfers']);
    // enqueue twice before any worker runs: the second adds nothing (deterministic job ids)
    const queue = createQueue(h.runtime.redis, h.prefix);
    cleanups.push(() => queue.close());
    expect((await enqueueBackfill(queue, jobs)).added).toBe(jobs.length);
    expect(await enqueueBackfill(queue, jobs)).toEqual({ added: 0, alreadyQueued: jobs.length });
    const done: string[] = [];
    const workers = [
      await startWorker(h.runtime, { schedules: false }),
      await startWorker(second, { schedules: false }),
    ];
    for (const w of workers) {
      w.worker.on('completed', (job) => done.push(job.id as string));
      cleanups.push(() => w.close());
    }
    const progress = await waitForBackfill(workers[0]!.queue, jobs);
    expect(progress.failed).toEqual([]);
    for (const planned of jobs) expect((await queue.getJob(planned.id))?.attemptsMade).toBe(1);
    // and the durable log saw each window run once
    const runs = await h.runtime.pool.query(
      `SELECT attempts FROM reporting.sync_windows WHERE kind = 'backfill'`,
    );
    expect(runs.rows.length).toBe(jobs.length - 1);
    expect(runs.rows.every((r) => r.attempts === 1)).toBe(true);
    expect(await paymentDifferences(h)).toEqual([]);
    // the backfill never touched the live checkpoint
    expect((await h.runtime.checkpoints.get('default', 'payments')).checkpoint).toBeNull();
  });
});

describe('a worker killed mid-backfill', () => {
  it('loses nothing: the stalled window is taken over by another worker and the replay is harmless', async () => {
    h = await startHarness({
      name: 'sigkill',
      sim: { days: 5, perDay: 120, switches: { slowRate: 1, slowMs: 40 } },
      env: { JOB_LOCK: '2s', UPSTREAM_RPS: '200', PAGE_SIZE: '20' },
    });
    const [from, to] = backfillDays(h);
    const jobs = planBackfill(h.settings, h.settings.sources, from, to, ['payments']);
    const env = {
      ...process.env,
      PAYMENTS_BASE_URL: h.sim.url,
      PAYMENTS_API_KEY: h.key,
      DATABASE_URL: h.databaseUrl,
      PAYSYNC_QUEUE_PREFIX: h.prefix,
      JOB_LOCK: '2s',
      PAGE_SIZE: '20',
      UPSTREAM_RPS: '200',
      LOG_LEVEL: 'warn',
    };
    const child: ChildProcess = spawn(
      process.execPath,
      ['bin/paysync.js', 'worker', '--no-schedules', '--concurrency', '2'],
      { env, stdio: 'ignore' },
    );
    cleanups.push(async () => child.kill('SIGKILL'));
    const observer = await startWorker(h.runtime, { schedules: false, concurrency: 1 });
    await observer.worker.pause(true); // only the child works until it is killed
    cleanups.push(() => observer.close());
    await enqueueBackfill(observer.queue, jobs);
    // kill it while windows are being fetched
    for (let i = 0; i < 200 && (await observer.queue.getActiveCount()) === 0; i++) await sleep(50);
    await sleep(300);
    child.kill('SIGKILL');
    h.sim.setSwitches({ slowRate: 0 });
    observer.worker.resume();
    const progress = await waitForBackfill(observer.queue, jobs, 90_000);
    expect(progress.failed).toEqual([]);
    expect(await paymentDifferences(h)).toEqual([]);
    const doubled = await h.runtime.pool.query(
      `SELECT id FROM reporting.payments GROUP BY id HAVING count(*) > 1`,
    );
    expect(doubled.rows).toEqual([]);
  });
});

describe('a worker holds more backfill items than it runs', () => {
  it('and on close gives the ones still waiting for their turn back to the queue, no attempt spent', async () => {
    // A slow service at 2 req/s: the in-flight limits call for a few items at once, not all ten.
    h = await startHarness({
      name: 'admission',
      sim: { days: 8, perDay: 30, switches: { latencyMs: 200 } },
      env: { UPSTREAM_RPS: '2', PAGE_SIZE: '20' },
    });
    const [from, to] = backfillDays(h, 9);
    const jobs = planBackfill(h.settings, h.settings.sources, from, to, ['payments']);
    const first = await startWorker(h.runtime, { schedules: false, concurrency: 1 });
    let closed = false;
    cleanups.push(async () => {
      if (!closed) await first.close();
    });
    const started: string[] = [];
    first.worker.on('active', (job) => started.push(job.id as string));
    await enqueueBackfill(first.queue, jobs);
    while (started.length < jobs.length) await sleep(20); // the worker took every item off the queue
    await first.close();
    closed = true;

    const queue = createQueue(h.runtime.redis, h.prefix);
    cleanups.push(() => queue.close());
    const states = await Promise.all(jobs.map(async (j) => (await queue.getJob(j.id))!));
    const done = states.filter((job) => job.finishedOn !== undefined);
    const handedBack = states.filter((job) => job.finishedOn === undefined);
    expect(handedBack.length).toBeGreaterThan(0);
    expect(done.length).toBeGreaterThan(0);
    for (const job of handedBack) expect(job.attemptsMade).toBe(0);

    const second = await startWorker(h.runtime, { schedules: false });
    cleanups.push(() => second.close());
    const progress = await waitForBackfill(second.queue, jobs, 90_000);
    expect(progress.failed).toEqual([]);
    expect(await paymentDifferences(h)).toEqual([]);
  });
});
