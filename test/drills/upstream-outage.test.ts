/**
 * The service goes down mid-backfill, every connection reset: the source's circuit opens, the backfill's
 * items wait (put back without spending their attempts) and nothing reaches the service but the ticks'
 * probes; `backfill --wait` says the service is down. Once it answers again, the first probe closes the
 * circuit, the items resume, and `--wait` exits 0 with every row in the warehouse.
 * Each step waits on an observed state (the circuit in Redis, the jobs in BullMQ, what `--wait` prints),
 * never on a sleep; the ticks are the test's, with the simulator's clock moved one SYNC_EVERY each.
 */
import { describe, expect, it } from '@jest/globals';
import { getBackfill } from '../../src/warehouse/backfill-store.js';
import { readCircuit } from '../../src/sync/circuit.js';
import { runTick } from '../../src/sync/run-work.js';
import { STREAMS } from '../../src/upstream/schemas.js';
import { startWorker, type RunningWorker } from '../../jobs/start-worker.js';
import { backfillDays, sleep } from '../helpers/backfill.js';
import { harnessEnv, startCli, type CliChild } from '../helpers/cli-child.js';
import { cleanupsAfterEach } from '../helpers/cleanups.js';
import { harnessEnv as cliEnv, runCli } from '../helpers/cli-run.js';
import {
  paymentDifferences,
  startHarness,
  transferDifferences,
  type Harness,
} from '../helpers/sync-harness.js';

const EVERY_MS = 1_000;

let h: Harness | null = null;
let worker: RunningWorker | null = null;
let child: CliChild | null = null;
cleanupsAfterEach(async () => {
  await child?.kill();
  await worker?.close();
  await h?.close();
  [h, worker, child] = [null, null, null];
});

/** Polls until `check` holds (an observed state), or fails naming what never happened. */
async function until(what: string, check: () => Promise<boolean>, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`never: ${what}`);
    await sleep(25);
  }
}

describe('the service down mid-backfill', () => {
  it('connection resets: items wait without spending attempts, then the backfill ends done with its rows', async () => {
    h = await startHarness({
      name: 'outagebackfill',
      // slow answers, so the outage lands while items remain
      sim: { days: 6, perDay: 100, switches: { slowRate: 1, slowMs: 25 } },
      env: { SYNC_EVERY: `${EVERY_MS}ms` },
    });
    const harness = h;
    const source = harness.settings.sources[0]!;
    const circuit = () => readCircuit(harness.runtime.redis, harness.prefix, source.name);
    const sent = () => harness.sim.requestLog().length;

    const [from, to] = backfillDays(harness);
    child = startCli(['backfill', '--from', from, '--to', to, '--wait'], harnessEnv(harness));
    await child.waitForStderr('waits for:');
    const id = Number(/backfill #(\d+)/.exec(child.stdout())?.[1]);
    worker = await startWorker(harness.runtime, { schedules: false, concurrency: 1 });
    const queue = worker.queue;
    await until('an item done', async () => ((await getBackfill(harness.runtime.pool, id))?.done ?? 0) > 0);
    harness.sim.setSwitches({ outage: 'reset' });
    const atOutage = (await getBackfill(harness.runtime.pool, id))!;
    expect(atOutage.done).toBeLessThan(atOutage.total);

    await until('the circuit opens', async () => (await circuit()).open);
    // the item running when the circuit opened ends (put back once): requests it had in flight, pages of a
    // window read at once, have reached the service by then; its next run must send nothing
    const putBack = async (times: number) =>
      (await queue.getJobs(['delayed'])).some((j) => j.attemptsStarted - j.attemptsMade >= times);
    await until('an item put back without spending an attempt', () => putBack(1));
    const sentAtOpen = sent();
    await until('an item put back twice without spending an attempt', () => putBack(2));
    expect(sent()).toBe(sentAtOpen); // nothing reached the service while the circuit was open
    await child.waitForStderr('the service is down, items wait and resume when it answers');
    expect((await circuit()).lastCode).toBe('CONNECTION_FAILED');
    const status = await runCli(['status'], cliEnv(harness));
    expect(status.status).toBe(1);
    expect(status.stdout).toContain('default: the service is down, connection reset; circuit open since');

    // a tick while it is down, one SYNC_EVERY after the opening: one probe per stream, reset too
    harness.sim.advance(EVERY_MS);
    for (const stream of STREAMS) await runTick(harness.runtime.syncContext(source), stream);
    expect(
      harness.sim
        .requestLog()
        .slice(sentAtOpen)
        .map((e) => [e.path, e.status]),
    ).toEqual([
      ['/api/paiements/organisations', 0],
      ['/api/transferts', 0],
    ]);

    harness.sim.setSwitches({ outage: 'none', slowRate: 0 });
    harness.sim.advance(EVERY_MS);
    await runTick(harness.runtime.syncContext(source), 'payments'); // its probe is answered
    expect((await circuit()).open).toBe(false);
    expect(await child.exited).toBe(0);
    expect(child.stdout()).toContain(`backfill done: #${id} done`);

    const jobs = await queue.getJobs(['completed', 'failed', 'delayed', 'waiting', 'active']);
    const items = jobs.filter((j) => j.name === 'window' || j.name === 'scan');
    expect(items.length).toBe(atOutage.total);
    expect(new Set(await Promise.all(items.map((j) => j.getState())))).toEqual(new Set(['completed']));
    // at most the attempt in flight when the service went down was spent, before the circuit opened
    expect(items.filter((j) => j.attemptsMade > 1).length).toBeLessThanOrEqual(1);
    expect(items.every((j) => j.attemptsMade <= 2)).toBe(true);

    for (const stream of STREAMS) await runTick(harness.runtime.syncContext(source), stream);
    expect(await paymentDifferences(harness)).toEqual([]);
    expect(await transferDifferences(harness)).toEqual([]);
  });
});
