/**
 * A live tick reads what can still change in its lookback, and only that, with every guarantee kept: a
 * record that leaves PENDING is read in its final state, and a record that appears late in a day the
 * checkpoint passed is still caught. Asserted on the warehouse against the simulator's truth, and on the
 * simulator's own count of requests (never on time).
 */
import { describe, expect, it } from '@jest/globals';
import { probeAndRecord } from '../../src/probe/record.js';
import { tickPayments } from '../../src/sync/tick.js';
import type { TickDeps } from '../../src/sync/context.js';
import { harnessFor, paymentDifferences } from '../helpers/sync-harness.js';

const MINUTE = 60_000;

describe('the lookback reads what can still change', () => {
  const harness = harnessFor({
    name: 'lookback',
    // pages capped at 50: a day is a dozen pages, as a real service's days are many
    // a fixed instant: the days, and so the windows and their records, are the same at every run
    sim: { days: 5, perDay: 600, now: new Date('2026-03-10T15:00:00Z'), switches: { pageCap: 50 } },
    // older days are revisited every tick (as every REVISIT_EVERY), so the whole warehouse can be compared
    env: { PAGE_SIZE: '50', SYNC_LOOKBACK: '3d', REVISIT_EVERY: '0s' },
  });

  /** One payments tick; the requests it sent and what it reported. */
  async function tick(deps: TickDeps) {
    const h = harness();
    const before = h.sim.requestLog().length;
    const report = await tickPayments(deps);
    return { report, requests: h.sim.requestLog().length - before };
  }

  it('finds moved and late records, and an idle tick costs fewer requests than reading the days in full', async () => {
    const h = harness();
    const source = h.settings.sources[0]!;
    const probed = await probeAndRecord(h.runtime, source);
    expect(probed.findings.paymentsHonourStatus).toBe(true);
    const deps = h.runtime.syncContext(source);
    await tick(deps); // the first tick reads every day in full
    expect(await paymentDifferences(h)).toEqual([]);

    // records move on (PENDING → final), new ones are made, and one appears late, two days back
    h.sim.advance(90 * MINUTE);
    const late = h.sim.addPayment(h.org, new Date(h.sim.now().getTime() - 2 * 86_400_000));
    const second = await tick(deps);
    expect(await paymentDifferences(h)).toEqual([]);
    const { rows } = await h.runtime.pool.query('SELECT status FROM reporting.payments WHERE id = $1', [
      late,
    ]);
    expect(rows).toHaveLength(1);
    expect(second.report.windows.every((w) => w.outcome === 'complete')).toBe(true);

    // a quiet while later: the settled days are confirmed by the count and their open records by status
    h.sim.advance(10 * MINUTE);
    const idle = await tick(deps);
    expect(await paymentDifferences(h)).toEqual([]);
    h.sim.advance(10 * MINUTE);
    const inFull = await tick({ ...deps, options: { ...deps.options, lookbackByEvidence: false } });
    expect(await paymentDifferences(h)).toEqual([]);
    process.stderr.write(`lookback: idle tick ${idle.requests} requests, read in full ${inFull.requests}\n`);
    expect(idle.requests).toBeLessThan(inFull.requests);
    expect(idle.report.windows.map((w) => w.outcome)).toEqual(inFull.report.windows.map((w) => w.outcome));
  });
});
