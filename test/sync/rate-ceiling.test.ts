/**
 * The rate ceiling is a budget shared by every worker (principle 9): two worker processes backfilling the
 * same source, against a service that answers after 100 ms, together never put more requests into any
 * sliding window of the service's own request log than the ceiling's contract (`UPSTREAM_RPS` × 1.05 + 1
 * in a second, in 5 seconds below 5 req/s), retries included. The assertion is on the simulator's log,
 * never on how fast the backfill went.
 */
import { describe, expect, it } from '@jest/globals';
import { maxRequestsInWindow } from '../../src/sim/request-log.js';
import { planBackfill } from '../../src/sync/backfill.js';
import { ceilingContract } from '../../src/sync/rate-gate.js';
import { enqueueBackfill } from '../../jobs/backfill-queue.js';
import { createQueue } from '../../jobs/queue.js';
import { backfillDays, sleep, waitForBackfill } from '../helpers/backfill.js';
import { harnessEnv, startCli } from '../helpers/cli-child.js';
import { cleanupsAfterEach } from '../helpers/cleanups.js';
import { paymentDifferences, startHarness, type Harness } from '../helpers/sync-harness.js';

let h: Harness | null = null;
const cleanups = cleanupsAfterEach(async () => {
  await h?.close();
  h = null;
});

describe('the rate ceiling across workers', () => {
  it('two workers never exceed the ceiling together, in the service’s own request log', async () => {
    // 4 req/s: the contract's window is then 5 seconds (22 requests at most), wide enough that a loaded
    // machine delaying one worker's requests behind the other's cannot make a violation out of jitter
    const rps = 4;
    h = await startHarness({
      name: 'ceiling',
      sim: { days: 4, perDay: 200, switches: { latencyMs: 100 } },
      env: { UPSTREAM_RPS: String(rps), PAGE_SIZE: '20' },
    });
    const queue = createQueue(h.runtime.redis, h.prefix);
    cleanups.push(() => queue.close());
    const workers = [1, 2].map(() =>
      startCli(['worker', '--no-schedules'], harnessEnv(h as Harness, { WORKER_CONCURRENCY: '2' })),
    );
    for (const w of workers) cleanups.push(() => w.kill());
    while ((await queue.getWorkers()).length < 2) await sleep(50);
    h.sim.clearRequestLog();

    const [from, to] = backfillDays(h);
    const jobs = planBackfill(h.settings, h.settings.sources, from, to, ['payments']);
    await enqueueBackfill(queue, jobs);
    const progress = await waitForBackfill(queue, jobs, 120_000);
    expect(progress.failed).toEqual([]);
    expect(await paymentDifferences(h)).toEqual([]);

    const log = h.sim.requestLog();
    expect(log.length).toBeGreaterThan(30); // enough requests for the ceiling to bind
    const { windowMs, most } = ceilingContract(rps);
    const busiest = maxRequestsInWindow(log, windowMs);
    process.stderr.write(
      `ceiling ${rps} req/s: ${log.length} requests, busiest ${windowMs} ms ${busiest} (at most ${most})\n`,
    );
    expect(busiest).toBeLessThanOrEqual(most);
  }, 180_000);
});
