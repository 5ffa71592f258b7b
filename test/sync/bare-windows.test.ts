/**
 * A backfill's bare-array windows hold their ids until their verdict (each is read whole, twice): a worker
 * that runs many backfill days at once reads at most BARE_WINDOWS_AT_ONCE of them past their first page
 * at a time, the others waiting their turn, and every window still completes with every record; a
 * tick's windows take no turn, so a tick never waits behind a backfill.
 * Read from the simulator's request log: a window is reading from its first request past page 0 of its
 * first read to its last request.
 */
import { describe, expect, it } from '@jest/globals';
import { BARE_WINDOWS_AT_ONCE, runPaymentsWindow } from '../../src/sync/window-run.js';
import { dayWindow, localDayOf } from '../../src/sync/windows.js';
import type { SimRequestLogEntry } from '../../src/sim/types.js';
import { harnessFor } from '../helpers/sync-harness.js';

const DAYS = 5;

/** The most windows reading at once: each from its first request past page 0 to its last request. */
function mostReadingAtOnce(log: readonly SimRequestLogEntry[]): number {
  const spans = new Map<string, { from: number; to: number }>();
  log.forEach((e, i) => {
    const q = new URLSearchParams(e.query);
    const window = q.get('dateFrom'); // payments lists only: transfers have no date filter
    if (window === null) return;
    const span = spans.get(window);
    if (span) span.to = i;
    else if (q.get('page') !== '0') spans.set(window, { from: i, to: i });
  });
  let most = 0;
  for (let i = 0; i < log.length; i++) {
    let reading = 0;
    for (const { from, to } of spans.values()) if (from <= i && i <= to) reading += 1;
    most = Math.max(most, reading);
  }
  return most;
}

describe('bare-array backfill windows', () => {
  const harness = harnessFor({
    name: 'barewindows',
    sim: {
      days: DAYS + 1,
      perDay: 120,
      now: new Date('2026-03-10T15:00:00Z'),
      switches: { shape: 'array' },
    },
    env: { PAGE_SIZE: '20' },
  });

  it('are read past their first page a bounded number at a time, each to a complete verdict', async () => {
    const h = harness();
    const source = h.settings.sources[0]!;
    const deps = h.runtime.syncContext(source);
    const today = h.sim.now().getTime();
    const windows = Array.from({ length: DAYS }, (_, i) =>
      dayWindow(localDayOf(new Date(today - (i + 1) * 86_400_000), 'UTC'), 'UTC'),
    );
    h.sim.clearRequestLog();
    const results = await Promise.all(windows.map((w) => runPaymentsWindow(deps, w, 'backfill')));

    for (const r of results) {
      expect(r.outcome).toBe('complete');
      expect(r.reads).toBe(2);
      expect(r.pages).toBeGreaterThan(10);
    }
    const most = mostReadingAtOnce(h.sim.requestLog());
    expect(most).toBeGreaterThan(0);
    expect(most).toBeLessThanOrEqual(BARE_WINDOWS_AT_ONCE);
    // every record of those days, in its status
    const from = windows.at(-1)!.start;
    const to = windows[0]!.end;
    const truth = h.sim
      .payments(h.org)
      .filter((p) => Date.parse(p.createdAt) >= from.getTime() && Date.parse(p.createdAt) < to.getTime())
      .map((p) => `${p.id} ${p.status} ${p.amount}`)
      .sort();
    expect(truth.length).toBeGreaterThan(DAYS * 100);
    const { rows } = await h.runtime.pool.query<{ line: string }>(
      `SELECT id || ' ' || status || ' ' || amount::text AS line FROM reporting.payments
        WHERE created_at >= $1 AND created_at < $2 ORDER BY 1`,
      [from, to],
    );
    expect(rows.map((r) => r.line).sort()).toEqual(truth);
  });

  it("of a tick's own (live, revisit) never wait for a turn", async () => {
    const h = harness();
    const source = h.settings.sources[0]!;
    // every turn taken for ever: a window that asked for one would never end
    const deps = {
      ...h.runtime.syncContext(source),
      bareWindowTurn: () => new Promise<() => void>(() => {}),
    };
    const day = dayWindow(localDayOf(new Date(h.sim.now().getTime() - 2 * 86_400_000), 'UTC'), 'UTC');
    for (const kind of ['revisit', 'live'] as const) {
      const r = await runPaymentsWindow(deps, day, kind);
      expect(r.pages).toBeGreaterThan(1);
      expect(r.outcome).toBe('complete');
    }
  });
});
