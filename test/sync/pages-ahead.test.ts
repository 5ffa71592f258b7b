/**
 * A window read with its pages asked for at once (pagesAhead) over real HTTP, some answers slowed at
 * random so they arrive out of order: the same verdict, counts and rows as the same window read one page
 * at a time, and the warehouse equals the simulator.
 */
import { describe, expect, it } from '@jest/globals';
import { runPaymentsWindow, type WindowResult } from '../../src/sync/window-run.js';
import { dayWindow, localDayOf } from '../../src/sync/windows.js';
import { harnessFor } from '../helpers/sync-harness.js';

const verdictOf = (r: WindowResult) => ({
  outcome: r.outcome,
  reasonCode: r.reasonCode,
  records: r.records,
  rejects: r.rejects,
  distinct: r.distinct,
  reportedTotal: r.reportedTotal,
  pages: r.pages,
  reads: r.reads,
  anomalies: r.anomalies,
});

describe('pages of a window read at once', () => {
  const harness = harnessFor({
    name: 'pagesahead',
    sim: {
      days: 2,
      perDay: 400,
      now: new Date('2026-03-10T15:00:00Z'),
      switches: { pageCap: 20, slowRate: 0.3, slowMs: 40 },
    },
    env: { PAGE_SIZE: '20' },
  });

  it('give the same verdict and rows as one page at a time, whatever order the answers arrive in', async () => {
    const h = harness();
    const source = h.settings.sources[0]!;
    const day = localDayOf(new Date(h.sim.now().getTime() - 86_400_000), 'UTC');
    const window = dayWindow(day, 'UTC');
    const deps = h.runtime.syncContext(source);
    const { pagesAhead: _, ...oneAtATime } = deps;
    const first = await runPaymentsWindow(oneAtATime, window, 'backfill');
    h.sim.clearRequestLog();
    const atOnce = await runPaymentsWindow({ ...deps, pagesAhead: () => 8 }, window, 'backfill');

    expect(verdictOf(atOnce)).toEqual(verdictOf(first));
    expect(atOnce.outcome).toBe('complete');
    expect(atOnce.pages).toBeGreaterThan(10);
    // several pages were out at once: some page was asked for before the one before it was answered
    const log = h.sim.requestLog();
    const overlapped = log.some(
      (e, i) => i > 0 && e.receivedAt < log[i - 1]!.receivedAt + log[i - 1]!.delayedMs,
    );
    expect(overlapped).toBe(true);
    // the day's records as the service holds them: every one, in its status
    const truth = h.sim
      .payments(h.org)
      .filter(
        (p) =>
          Date.parse(p.createdAt) >= window.start.getTime() && Date.parse(p.createdAt) < window.end.getTime(),
      )
      .map((p) => `${p.id} ${p.status} ${p.amount}`)
      .sort();
    const { rows } = await h.runtime.pool.query<{ line: string }>(
      `SELECT id || ' ' || status || ' ' || amount::text AS line FROM reporting.payments
        WHERE created_at >= $1 AND created_at < $2 ORDER BY 1`,
      [window.start, window.end],
    );
    expect(rows.map((r) => r.line).sort()).toEqual(truth);
  });
});
