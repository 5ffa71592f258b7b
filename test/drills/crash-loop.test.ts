/**
 * Crash drills. The crash soak, short: two seeded runs of bench/soak-run.ts (the full soak is `node
 * dist/bench/soak.js --runs 20`): worker processes killed with SIGKILL at named pause points mid-backfill
 * and replaced, an export killed in some runs and run again; the warehouse must equal the simulator record
 * by record, nothing doubled, and the day's pack whole as its manifest names it. And a crash loop: the same
 * jobs killed five times in a row where it hurts (a window between its committed rows and its verdict, a
 * transfers full scan between pages), after which `backfill --wait` still exits 0.
 * Needs the build (npm test builds before jest).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { describeRun, soakRun } from '../../bench/soak-run.js';
import { PAUSE_ANNOUNCEMENT } from '../../src/pause-point.js';
import { getBackfill } from '../../src/warehouse/backfill-store.js';
import { backfillDays } from '../helpers/backfill.js';
import { harnessEnv, startCli, type CliChild } from '../helpers/cli-child.js';
import {
  paymentDifferences,
  startHarness,
  transferDifferences,
  type Harness,
} from '../helpers/sync-harness.js';

describe('crash soak (short)', () => {
  // Worker kills and the export kill land at named pause points, on the process's own announcement.
  it.each([
    [101, 'export:after-rename' as const],
    [102, false as const],
  ])(
    'seed %i: workers (and an export, at %s) killed with SIGKILL lose nothing and double nothing',
    async (seed, killExport) => {
      const result = await soakRun({ seed, days: 3, perDay: 150, timeoutMs: 90_000, killExport });
      process.stderr.write(`${describeRun(result)}\n`);
      expect(result.problems).toEqual([]);
      expect(result.workerKills).toBeGreaterThan(0);
      expect(result.exportKilledAt).toBe(killExport || undefined);
      expect(result.matched).toBe(true);
    },
    180_000, // a guard only: runs take 10-70 s depending on the machine's load
  );
});

let h: Harness | null = null;
const children: CliChild[] = [];
afterEach(async () => {
  await Promise.all(children.splice(0).map((c) => c.kill()));
  await h?.close();
  h = null;
});

const count = (text: string, needle: string) => text.split(needle).length - 1;

describe('a crash loop on the same jobs', () => {
  it('every item of a backfill killed 5 times in a row at its worst point still completes: --wait exits 0, nothing missing or doubled', async () => {
    h = await startHarness({ name: 'crashloop', sim: { days: 1, perDay: 60 }, env: { PAGE_SIZE: '10' } });
    const env = harnessEnv(h, { JOB_LOCK: '1s' });
    const [from, to] = backfillDays(h, 1);
    const waiting = startCli(['backfill', '--from', from, '--to', to, '--wait'], env);
    children.push(waiting);
    await waiting.waitForStderr('waits for:');
    const id = Number(/backfill #(\d+)/.exec(waiting.stdout())?.[1]);
    const items = (await getBackfill(h.runtime.pool, id))!;
    const windows = items.total - 1; // and one transfers full scan
    const points = 'window:before-verdict,scan:page-committed';
    for (let round = 1; round <= 5; round++) {
      const worker = startCli(['worker', '--no-schedules', '--concurrency', String(items.total)], {
        ...env,
        PAYSYNC_PAUSE_AT: points,
      });
      children.push(worker);
      // every item has reached its pause point in this worker: the kill lands on all of them at once
      for (let i = 0; ; i++) {
        const err = worker.stderr();
        if (
          count(err, `${PAUSE_ANNOUNCEMENT}window:before-verdict`) === windows &&
          count(err, `${PAUSE_ANNOUNCEMENT}scan:page-committed`) === 1
        )
          break;
        if (worker.process.exitCode !== null || i > 1_200)
          throw new Error(`round ${round}: the worker did not pause every item: ${err.slice(-2_000)}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      await worker.kill();
    }
    const runs = await h.runtime.pool.query<{ label: string; runs: number; state: string }>(
      'SELECT label, runs, state FROM reporting.backfill_items WHERE backfill_id = $1',
      [id],
    );
    expect(runs.rows.every((r) => r.runs === 5 && r.state === 'running')).toBe(true);

    const survivor = startCli(['worker', '--no-schedules'], env);
    children.push(survivor);
    expect(await waiting.exited).toBe(0);
    expect(waiting.stdout()).toContain(`backfill done: #${id} done`);
    const after = await h.runtime.pool.query<{ runs: number; state: string }>(
      'SELECT runs, state FROM reporting.backfill_items WHERE backfill_id = $1',
      [id],
    );
    expect(after.rows.every((r) => r.runs === 6 && r.state === 'done')).toBe(true);
    expect(await paymentDifferences(h)).toEqual([]);
    expect(await transferDifferences(h)).toEqual([]);
    const doubled = await h.runtime.pool.query(
      `SELECT id FROM reporting.payments GROUP BY id HAVING count(*) > 1
       UNION ALL SELECT id FROM reporting.transfers GROUP BY id HAVING count(*) > 1`,
    );
    expect(doubled.rows).toEqual([]);
  }, 240_000);
});
