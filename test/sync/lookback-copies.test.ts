/**
 * The lookback's reads hold part of the list only (one status, a few seconds around one record), so they
 * never judge copies of one record (src/sync/copies.ts): a payment the rejects hold as listed in
 * contradicting copies keeps its rejects open and none of its copies is written by them, and a window
 * holding such a payment, or one they listed twice, is read in full in the same tick, whose reads hold and
 * judge every copy. On real HTTP with the simulator, PostgreSQL and Redis, asserted on the warehouse and
 * on the simulator's request log (never on time).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { probeAndRecord } from '../../src/probe/record.js';
import type { SimPayment } from '../../src/sim/types.js';
import type { TickDeps } from '../../src/sync/context.js';
import { tickPayments } from '../../src/sync/tick.js';
import { startHarness, type Harness } from '../helpers/sync-harness.js';

let h: Harness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

/** A fixed service clock: the same days, records and statuses at every run. */
const NOW = new Date('2026-03-10T15:00:00.000Z');
const HOUR_S = 3_600;
const PAGE_SIZE = 20;

/** A harness whose first tick read every day in full, and whose probe saw `status` honoured. */
async function synced(name: string): Promise<{ hh: Harness; deps: TickDeps }> {
  const hh = await startHarness({
    name,
    sim: { days: 4, perDay: 200, now: NOW },
    env: { PAGE_SIZE: String(PAGE_SIZE), SYNC_LOOKBACK: '3d' },
  });
  h = hh;
  const source = hh.settings.sources[0]!;
  expect((await probeAndRecord(hh.runtime, source)).findings.paymentsHonourStatus).toBe(true);
  const deps = hh.runtime.syncContext(source);
  await tickPayments(deps);
  return { hh, deps };
}

/**
 * The first PENDING payment of 8 March, a day the lookback has settled: dozens of PENDING payments follow
 * it in the PENDING list (of 7 to 9 March), so its copy a page later is within the list.
 */
function victimOf(hh: Harness): SimPayment {
  const pending = hh.sim
    .payments(hh.org)
    .filter((p) => p.status === 'PENDING' && p.createdAt.startsWith('2026-03-08'))
    .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : 1));
  return pending[0]!;
}

/**
 * Its second listing, a page later, differs in amount with the same updatedAt: a tie, neither copy can be
 * kept. The service's `total` counts each id once (`totalOffset` -1 takes the copy out again), as the
 * lookback's count and its status lists' evidence expect: the lists end on evidence and the count
 * matches what the warehouse holds, so nothing but the copies sends a day to a full read.
 */
const contradict = (hh: Harness, id: string) =>
  hh.sim.setSwitches({
    duplicateIds: [id],
    duplicateOffset: PAGE_SIZE + 1,
    copyVariant: 'amount',
    totalOffset: -1,
  });

async function rejectsOf(hh: Harness, id: string) {
  const { rows } = await hh.runtime.pool.query<{ amount: string; open: boolean; reason: string }>(
    `SELECT raw->>'amount' AS amount, resolved_at IS NULL AS open, reason FROM reporting.sync_rejects
      WHERE stream = 'payments' AND record_id = $1 ORDER BY raw->>'amount'`,
    [id],
  );
  return rows;
}

async function heldAmount(hh: Harness, id: string): Promise<string | undefined> {
  const { rows } = await hh.runtime.pool.query<{ amount: string }>(
    `SELECT amount::text AS amount FROM reporting.payments WHERE id = $1`,
    [id],
  );
  return rows[0]?.amount;
}

/** One evidence-led tick: its `status` lists and its reads of whole windows holding `at`. */
async function lookbackTick(hh: Harness, deps: TickDeps, at: string) {
  const before = hh.sim.requestLog().length;
  await tickPayments(deps);
  const queries = hh.sim
    .requestLog()
    .slice(before)
    .map((e) => new URLSearchParams(e.query));
  const reads = (instant: string) => {
    const t = Date.parse(instant) / 1000;
    return queries.filter(
      (q) =>
        !q.has('status') &&
        q.get('size') === String(PAGE_SIZE) && // not the lookback's count (size 1)
        Number(q.get('dateFrom')) <= t &&
        Number(q.get('dateTo')) >= t &&
        Number(q.get('dateTo')) - Number(q.get('dateFrom')) > HOUR_S,
    ).length;
  };
  return {
    statusLists: queries.filter((q) => q.has('status')).map((q) => q.get('status')),
    windowReads: reads(at),
    /** Reads of whole windows holding noon of 9 March, another settled day. */
    otherDayReads: reads('2026-03-09T12:00:00.000Z'),
  };
}

describe('the lookback leaves copies of one record to the window reads', () => {
  it('a payment held as contradicted: the PENDING list writes none of its copies, its rejects stay open, its day is read in full', async () => {
    const { hh, deps } = await synced('lookback-contradicted');
    const victim = victimOf(hh);
    contradict(hh, victim.id);
    // a tick reading every day in full finds the tie: both versions quarantined, neither written
    await tickPayments({ ...deps, options: { ...deps.options, lookbackByEvidence: false } });
    const found = await rejectsOf(hh, victim.id);
    expect(found.map((r) => r.open)).toEqual([true, true]);
    for (const r of found) expect(r.reason).toMatch(/^contradicting copies: .*none is kept/);
    const amount = await heldAmount(hh, victim.id);

    const tick = await lookbackTick(hh, deps, victim.createdAt);
    expect(tick.statusLists).toContain('PENDING'); // the lookback read the open records by status
    expect(tick.windowReads).toBeGreaterThan(0); // and left the victim's day to a read of the whole day
    expect(tick.otherDayReads).toBe(0); // a settled day without it stays confirmed by the evidence
    expect((await rejectsOf(hh, victim.id)).map((r) => r.open)).toEqual([true, true]);
    expect(await heldAmount(hh, victim.id)).toBe(amount);
  });

  it('a payment the PENDING list names twice: its day is read in full in the same tick, which judges the copies', async () => {
    const { hh, deps } = await synced('lookback-listed-twice');
    const victim = victimOf(hh);
    contradict(hh, victim.id);
    const tick = await lookbackTick(hh, deps, victim.createdAt);
    expect(tick.statusLists).toContain('PENDING');
    expect(tick.windowReads).toBeGreaterThan(0);
    const rejects = await rejectsOf(hh, victim.id);
    expect(rejects.map((r) => r.open)).toEqual([true, true]);
    for (const r of rejects) expect(r.reason).toMatch(/^contradicting copies: .*none is kept/);
  });
});
