/**
 * Durable backfills, as an operator runs them: `backfill` records the backfill in PostgreSQL before
 * queueing it, re-running the same range adds nothing, `--wait` says what it waits for and gives up at
 * `--timeout` with what is left, `--list` shows progress and `--cancel` stops one.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { getBackfill, listBackfills } from '../../src/warehouse/backfill-store.js';
import { startWorker } from '../../jobs/start-worker.js';
import { backfillJobId, createQueue } from '../../jobs/queue.js';
import { refillQueue } from '../../jobs/refill.js';
import { planBackfill } from '../../src/sync/backfill.js';
import { finishItem, recordBackfill, startItem } from '../../src/warehouse/backfill-store.js';
import { backfillDays } from '../helpers/backfill.js';
import { harnessEnv, startCli } from '../helpers/cli-child.js';
import {
  paymentDifferences,
  startHarness,
  transferDifferences,
  type Harness,
} from '../helpers/sync-harness.js';

let h: Harness | null = null;
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await h?.close();
  h = null;
});

async function cli(harness: Harness, args: string[]) {
  const child = startCli(args, harnessEnv(harness));
  cleanups.push(() => child.kill());
  const code = await child.exited;
  return { code, stdout: child.stdout(), stderr: child.stderr() };
}

describe('backfill recorded in PostgreSQL', () => {
  it('records once, waits with a reason, times out with what is left, then completes once a worker runs', async () => {
    h = await startHarness({ name: 'durable', sim: { days: 3, perDay: 60 } });
    const [from, to] = backfillDays(h, 3);
    const first = await cli(h, ['backfill', '--from', from, '--to', to]);
    expect(first.code).toBe(0);
    expect(first.stdout).toMatch(/backfill #(\d+) .* item\(s\) recorded/);
    const id = Number(/#(\d+)/.exec(first.stdout)![1]);

    const again = await cli(h, ['backfill', '--from', from, '--to', to]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(`backfill #${id} ${from} → ${to} is already recorded and running`);
    expect(again.stdout).toContain('0 job(s) queued');
    expect((await listBackfills(h.runtime.pool)).map((b) => b.id)).toEqual([id]);

    // no worker yet: --wait says so, and gives up at --timeout naming what is left
    const waited = await cli(h, ['backfill', '--from', from, '--to', to, '--wait', '--timeout', '2s']);
    expect(waited.code).toBe(1);
    expect(waited.stderr).toContain('no worker connected');
    expect(waited.stderr).toContain(`gave up waiting after 2s: backfill #${id}`);
    expect(waited.stderr).toContain('left: default transfers full scan');

    // status shows the running backfill and its progress, read from PostgreSQL
    const status = await cli(h, ['status']);
    expect(status.stdout).toMatch(
      new RegExp(`#${id} ${from} → ${to} \\(payments, transfers\\): 0/\\d+ done, 0 failed`),
    );
    const statusJson = await cli(h, ['status', '--json']);
    const body = JSON.parse(statusJson.stdout) as { backfills: Array<{ id: number; done: number }> };
    expect(body.backfills.map((x) => [x.id, x.done])).toEqual([[id, 0]]);

    // --wait started before any worker: it says so, then follows the worker's progress to the end
    const waiting = startCli(['backfill', '--from', from, '--to', to, '--wait'], harnessEnv(h));
    cleanups.push(() => waiting.kill());
    await waiting.waitForStderr(`backfill #${id} waits for: 0 running`);
    await waiting.waitForStderr('no worker connected');
    const worker = await startWorker(h.runtime, { schedules: false });
    cleanups.push(() => worker.close());
    expect(await waiting.exited).toBe(0);
    expect(waiting.stdout()).toContain(`backfill #${id} ${from} → ${to} is already recorded and running`);
    expect(waiting.stdout()).toContain(`backfill done: #${id} done`);
    const b = await getBackfill(h.runtime.pool, id);
    expect(b).toMatchObject({ state: 'done', failed: 0, queued: 0, running: 0 });
    expect(b!.done).toBe(b!.total);
    expect(await paymentDifferences(h)).toEqual([]);
    expect(await transferDifferences(h)).toEqual([]);

    const list = await cli(h, ['backfill', '--list']);
    expect(list.stdout).toContain(`#${id} done ${from} → ${to}`);

    // a finished range run again is a new backfill that reads it again (harmless)
    const rerun = await cli(h, ['backfill', '--from', from, '--to', to, '--wait']);
    expect(rerun.code).toBe(0);
    expect(rerun.stdout).toContain(`backfill #${id + 1} ${from} → ${to}`);
    expect(await paymentDifferences(h)).toEqual([]);
  });

  it('--cancel stops a backfill: its items do not run and --wait reports it cancelled', async () => {
    h = await startHarness({ name: 'cancel', sim: { days: 2, perDay: 20 } });
    const [from, to] = backfillDays(h, 2);
    const first = await cli(h, ['backfill', '--from', from, '--to', to, '--stream', 'payments']);
    const id = Number(/#(\d+)/.exec(first.stdout)![1]);
    const cancelled = await cli(h, ['backfill', '--cancel', String(id)]);
    expect(cancelled.code).toBe(0);
    expect(cancelled.stdout).toContain(`backfill #${id} cancelled`);
    expect((await cli(h, ['backfill', '--cancel', String(id)])).stderr).toContain('already cancelled');
    expect((await cli(h, ['backfill', '--cancel', '999999'])).code).toBe(1);
    expect((await cli(h, ['backfill', '--cancel', 'x'])).code).toBe(2);

    const worker = await startWorker(h.runtime, { schedules: false });
    cleanups.push(() => worker.close());
    // the worker takes the queued jobs and skips them: nothing is read for a cancelled backfill
    for (let i = 0; i < 200 && (await worker.queue.getCompletedCount()) < 1; i++)
      await new Promise((r) => setTimeout(r, 50));
    const { rows } = await h.runtime.pool.query('SELECT count(*)::int AS n FROM reporting.payments');
    expect(rows[0].n).toBe(0);
    const b = await getBackfill(h.runtime.pool, id);
    expect(b).toMatchObject({ state: 'cancelled', done: 0, running: 0, queued: 0 });
  });

  it('usage errors exit 2 with one line', async () => {
    h = await startHarness({ name: 'bfusage' });
    const bad = await cli(h, [
      'backfill',
      '--from',
      '2026-01-01',
      '--to',
      '2026-01-02',
      '--timeout',
      'soon',
      '--wait',
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--timeout must be a duration');
    const alone = await cli(h, ['backfill', '--from', '2026-01-01', '--to', '2026-01-02', '--timeout', '5m']);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('--timeout goes with --wait');
  });

  it('the re-fill puts back what Redis lost (open items and schedules), and adds nothing twice', async () => {
    h = await startHarness({ name: 'refill' });
    const [from, to] = backfillDays(h, 2);
    const jobs = planBackfill(h.settings, h.settings.sources, from, to, ['payments', 'transfers']);
    const request = {
      sources: ['default'],
      streams: ['payments', 'transfers'],
      fromDay: from,
      toDay: to,
      timeZone: 'UTC',
    };
    const { backfill } = await recordBackfill(h.runtime.pool, request, jobs);
    const queue = createQueue(h.runtime.redis, h.prefix);
    cleanups.push(() => queue.close());
    const refill = () => refillQueue(queue, h!.runtime.pool, h!.settings, { schedules: true });
    const queued = async () => {
      let n = 0;
      for (const j of jobs) if (await queue.getJob(backfillJobId(j.id, backfill.id))) n += 1;
      return n;
    };

    const first = await refill();
    expect(first).toMatchObject({ items: jobs.length, added: jobs.length });
    expect(first.schedules).toEqual(expect.arrayContaining(['tick|default|payments', 'export|daily']));
    expect(await refill()).toEqual({ items: jobs.length, added: 0, schedules: [] });
    expect(await queued()).toBe(jobs.length);

    // Redis loses everything under this queue's prefix (our own keys only: the shared Redis is left alone)
    const keys = await h.runtime.redis.keys(`${h.prefix}*`);
    await h.runtime.redis.del(...keys);
    expect(await queued()).toBe(0);
    const again = await refill();
    expect(again).toMatchObject({ items: jobs.length, added: jobs.length });
    expect(again.schedules.sort()).toEqual(first.schedules.sort());
    expect(await queued()).toBe(jobs.length);
  });

  it('items of one backfill finishing at the same moment still settle it (the last verdict ends it)', async () => {
    h = await startHarness({ name: 'settle' });
    const [from, to] = backfillDays(h, 2);
    const jobs = planBackfill(h.settings, h.settings.sources, from, to, ['payments', 'transfers']);
    for (let round = 0; round < 10; round++) {
      const request = {
        sources: ['default'],
        streams: ['payments'],
        fromDay: from,
        toDay: to,
        timeZone: 'UTC',
      };
      const { backfill } = await recordBackfill(h.runtime.pool, request, jobs);
      for (const j of jobs) expect(await startItem(h.runtime.pool, backfill.id, j.id)).toBe(true);
      await Promise.all(
        jobs.map((j) =>
          finishItem(h!.runtime.pool, backfill.id, j.id, { state: 'done', records: 1, detail: null }),
        ),
      );
      expect(await getBackfill(h.runtime.pool, backfill.id)).toMatchObject({
        state: 'done',
        done: jobs.length,
      });
    }
  });
});
