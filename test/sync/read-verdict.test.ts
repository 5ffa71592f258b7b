/**
 * The verdict of every kind of read, without a server: payments windows (bounds, caps, shapes, drift, a
 * lying total), transfers full scans and oldest-first tail reads, the order a read shows, and which read
 * a tick plans for each order.
 */
import { describe, expect, it } from '@jest/globals';
import {
  confirmedCopies,
  DistinctIds,
  canStopNewestFirst,
  decideNewestFirst,
  decideScan,
  decideSplitFirst,
  decideTail,
  decideWindow,
  emptyOrder,
  observeOrder,
  orderOf,
  type Listing,
  type TailEvidence,
  type WindowEvidence,
} from '../../src/sync/read-verdict.js';
import {
  planTransfersRead,
  transfersStaleness,
  type TransfersPlanInput,
} from '../../src/sync/transfers-plan.js';
import type { TransferList } from '../../src/sync/transfer-state.js';
import { transfersFreshness } from '../../src/sync/transfers-freshness.js';

describe('DistinctIds: the one count of distinct records', () => {
  it('counts ids once and anonymous records once per copy; merging keeps the larger anonymous count', () => {
    const a = new DistinctIds();
    for (const id of ['x', 'y', 'x', null, null]) a.add(id);
    expect(a.size).toBe(4);
    const b = new DistinctIds();
    for (const id of ['y', 'z', null]) b.add(id);
    expect(a.merge(b)).toBe(1); // only z is new
    expect(a.size).toBe(5); // x, y, z and the two anonymous records of the larger read
  });
});

const window = (e: Partial<WindowEvidence>): WindowEvidence => ({
  kind: 'backfill',
  reads: 1,
  distinct: 100,
  maxTotal: 100,
  firstReadPages: 4,
  addedByLastRead: null,
  canSplit: true,
  ...e,
});

describe('decideWindow: a payments window', () => {
  it('is complete when the distinct ids reach the largest total (also when the total lies low)', () => {
    expect(decideWindow(window({}))).toEqual({ verdict: 'complete' });
    expect(decideWindow(window({ distinct: 120, maxTotal: 100 }))).toEqual({ verdict: 'complete' });
  });

  it('short of its total (drift, a total that lies high): re-read, then split, then incomplete', () => {
    expect(decideWindow(window({ distinct: 98 }))).toEqual({ verdict: 're-read' });
    expect(decideWindow(window({ distinct: 98, reads: 2 }))).toEqual({ verdict: 'split', parts: 2 });
    const last = decideWindow(window({ distinct: 98, reads: 2, canSplit: false }));
    expect(last).toEqual({
      verdict: 'incomplete',
      reason: 'TOTAL_SHORT',
      detail: 'received 98 distinct records of the 100 the service reported, after 2 reads',
    });
  });

  it('bare arrays: one page or a live window is complete; older windows need a read that adds nothing', () => {
    const bare = window({ maxTotal: null });
    expect(decideWindow({ ...bare, firstReadPages: 1 })).toEqual({ verdict: 'complete' });
    expect(decideWindow({ ...bare, kind: 'live' })).toEqual({ verdict: 'complete' });
    expect(decideWindow(bare)).toEqual({ verdict: 're-read' });
    expect(decideWindow({ ...bare, reads: 2, addedByLastRead: 0 })).toEqual({ verdict: 'complete' });
    expect(decideWindow({ ...bare, reads: 2, addedByLastRead: 3 })).toEqual({ verdict: 're-read' });
    expect(decideWindow({ ...bare, reads: 3, addedByLastRead: 1 }).verdict).toBe('incomplete');
  });
});

describe('decideSplitFirst: a window too large for one read', () => {
  const base = { reportedTotal: 9000, farOutside: 0, parentTotal: null, canSplit: true, parts: 2 };
  it('is split when its total asks for several parts', () => {
    expect(decideSplitFirst(base)).toEqual({ split: true, parts: 2 });
  });
  it('is read whole when the service ignores the date filter, when it may not split, or fits', () => {
    expect(decideSplitFirst({ ...base, farOutside: 3 })).toEqual({ split: false });
    expect(decideSplitFirst({ ...base, parentTotal: 9000 })).toEqual({ split: false });
    expect(decideSplitFirst({ ...base, canSplit: false })).toEqual({ split: false });
    expect(decideSplitFirst({ ...base, parts: 1 })).toEqual({ split: false });
  });
});

describe('decideScan: a full scan of the transfer list', () => {
  it('bare arrays (no total): complete, paging ended on an empty page', () => {
    expect(decideScan({ reads: 1, distinct: 10, maxTotal: null })).toEqual({ verdict: 'complete' });
  });
  it('short of total: read once more, then incomplete with the numbers', () => {
    expect(decideScan({ reads: 1, distinct: 150, maxTotal: 152 })).toEqual({ verdict: 're-read' });
    expect(decideScan({ reads: 2, distinct: 152, maxTotal: 152 })).toEqual({ verdict: 'complete' });
    expect(decideScan({ reads: 2, distinct: 150, maxTotal: 152 })).toEqual({
      verdict: 'incomplete',
      reason: 'TOTAL_SHORT',
      detail: 'received 150 distinct transfers of the 152 the service reported, after 2 reads',
    });
  });
  it('copies held back unjudged on different pages: read again by a read that holds them all, even bare', () => {
    expect(decideScan({ reads: 1, distinct: 10, maxTotal: null, copiesUnjudged: true })).toEqual({
      verdict: 're-read',
    });
    expect(decideScan({ reads: 2, distinct: 10, maxTotal: 11, copiesUnjudged: true })).toEqual({
      verdict: 're-read',
    });
    // a list that keeps listing new ids twice does not read for ever
    expect(decideScan({ reads: 3, distinct: 10, maxTotal: null, copiesUnjudged: true })).toEqual({
      verdict: 'complete',
    });
  });
});

const tail = (e: Partial<TailEvidence>): TailEvidence => ({
  oldestFirst: true,
  firstPageCount: 100,
  firstPageKnown: 100,
  geometryChanged: false,
  unsettledMissed: 0,
  held: 1000,
  maxTotal: 1000,
  ...e,
});

describe('decideTail: an oldest-first tail read', () => {
  it('is complete with every proof: order, overlap, unsettled seen again, held reaching total', () => {
    expect(decideTail(tail({}))).toEqual({ verdict: 'complete' });
    expect(decideTail(tail({ maxTotal: null }))).toEqual({ verdict: 'complete' }); // bare arrays
    expect(decideTail(tail({ firstPageKnown: 1 }))).toEqual({ verdict: 'complete' });
  });
  it.each<[string, Partial<TailEvidence>, RegExp]>([
    ['the order broke', { oldestFirst: false }, /no longer oldest-first/],
    ['the list got shorter than the start page', { firstPageCount: 0 }, /shorter/],
    ['a new page cap', { geometryChanged: true }, /different number of records per page/],
    ['nothing on the first page was held', { firstPageKnown: 0 }, /moved under the positions/],
    ['an unsettled transfer moved before the start', { unsettledMissed: 2 }, /2 unsettled/],
    ['a late transfer before the start (held short of total)', { held: 999 }, /999 distinct transfers held/],
  ])('falls back to a full scan when %s', (_label, e, why) => {
    const v = decideTail(tail(e));
    expect(v.verdict).toBe('full-scan');
    expect(v.verdict === 'full-scan' && v.why).toMatch(why);
  });
});

describe('decideNewestFirst: a newest-first read that stopped early', () => {
  it('is complete when the ids held reach total, or when no total is sent (bare arrays)', () => {
    expect(decideNewestFirst({ held: 500, maxTotal: 500 })).toEqual({ verdict: 'complete' });
    expect(decideNewestFirst({ held: 500, maxTotal: null })).toEqual({ verdict: 'complete' });
  });
  it('falls back to a full scan short of total (a late transfer older than the stop)', () => {
    expect(decideNewestFirst({ held: 499, maxTotal: 500 })).toEqual({
      verdict: 'full-scan',
      why: '499 distinct transfers held of the 500 the service reported',
    });
  });
});

describe('the order a read shows', () => {
  const seen = (...times: string[]) => observeOrder(emptyOrder(), times);
  it('tells newest-first, oldest-first and unknown apart; equal times do not break either', () => {
    expect(orderOf(seen('2026-01-03', '2026-01-02', '2026-01-02', '2026-01-01'))).toBe('newest-first');
    expect(orderOf(seen('2026-01-01', '2026-01-01', '2026-01-02'))).toBe('oldest-first');
    expect(orderOf(seen('2026-01-02', '2026-01-01', '2026-01-03'))).toBe('unknown');
    expect(orderOf(seen('2026-01-01', '2026-01-01'))).toBe('unknown');
  });
  it('a newest-first read stops only past stopBefore while the order holds', () => {
    const stop = new Date('2026-01-02T00:00:00Z');
    expect(canStopNewestFirst(stop, seen('2026-01-03', '2026-01-02T12:00:00Z'))).toBe(false);
    expect(canStopNewestFirst(stop, seen('2026-01-03', '2026-01-01'))).toBe(true);
    expect(canStopNewestFirst(stop, seen('2026-01-01', '2026-01-03'))).toBe(false); // not newest-first
    expect(canStopNewestFirst(null, seen('2026-01-03', '2026-01-01'))).toBe(false);
  });
});

const HOUR = 3_600_000;
const now = new Date('2026-11-22T12:00:00Z');
const list = (l: Partial<TransferList>): TransferList => ({
  order: 'oldest-first',
  pageSize: 100,
  servedSize: 100,
  anonymous: 0,
  lastFullScanAt: new Date(now.getTime() - HOUR / 2),
  ...l,
});
const plan = (i: Partial<TransfersPlanInput>): TransfersPlanInput => ({
  now,
  list: list({}),
  checkpoint: new Date(now.getTime() - 10 * 60_000),
  pageSize: 100,
  unsettled: { oldestAt: new Date(now.getTime() - 2 * 86_400_000), oldestPosition: 99_250, unpositioned: 0 },
  held: 100_000,
  lookbackMs: 3 * 86_400_000,
  fullScanEveryMs: HOUR,
  unorderedScanEveryMs: 0,
  ...i,
});

describe('planTransfersRead: which read a tick makes', () => {
  it('a full scan first, and as the periodic verification, whatever the order', () => {
    expect(planTransfersRead(plan({ list: null })).mode).toBe('full');
    expect(planTransfersRead(plan({ list: list({ lastFullScanAt: null }) })).mode).toBe('full');
    const stale = list({ lastFullScanAt: new Date(now.getTime() - HOUR) });
    expect(planTransfersRead(plan({ list: stale }))).toMatchObject({ mode: 'full', why: /verification/ });
  });

  it('oldest-first: from the page before the one holding the oldest unsettled transfer', () => {
    expect(planTransfersRead(plan({}))).toMatchObject({ mode: 'tail', startPage: 991, skipped: 99_100 });
    // a silent cap of 10: positions count in pages of 10
    const capped = plan({ list: list({ servedSize: 10 }) });
    expect(planTransfersRead(capped)).toMatchObject({ mode: 'tail', startPage: 9924, skipped: 99_240 });
    // nothing unsettled: from the page before the last record's
    const settled = plan({ unsettled: { oldestAt: null, oldestPosition: null, unpositioned: 0 } });
    expect(planTransfersRead(settled)).toMatchObject({ mode: 'tail', startPage: 998 });
  });

  it('oldest-first falls back to a full scan when positions cannot be trusted', () => {
    expect(planTransfersRead(plan({ pageSize: 50 })).mode).toBe('full');
    const unpositioned = { oldestAt: null, oldestPosition: 5, unpositioned: 1 };
    expect(planTransfersRead(plan({ unsettled: unpositioned })).mode).toBe('full');
    const early = { oldestAt: null, oldestPosition: 150, unpositioned: 0 };
    expect(planTransfersRead(plan({ unsettled: early })).mode).toBe('full'); // the tail is the whole list
  });

  it('newest-first: stop past the checkpoint minus the lookback, or the oldest unsettled if older', () => {
    const newest = plan({ list: list({ order: 'newest-first' }) });
    const lookback = new Date(now.getTime() - 10 * 60_000 - 3 * 86_400_000);
    expect(planTransfersRead(newest)).toMatchObject({ mode: 'newest-first', stopBefore: lookback });
    const oldUnsettled = new Date(now.getTime() - 10 * 86_400_000);
    const older = { ...newest, unsettled: { oldestAt: oldUnsettled, oldestPosition: null, unpositioned: 1 } };
    expect(planTransfersRead(older)).toMatchObject({ stopBefore: oldUnsettled });
    expect(planTransfersRead({ ...newest, checkpoint: null }).mode).toBe('full');
  });

  it('unknown order: a full scan every tick, unless TRANSFERS_UNORDERED_SCAN_EVERY allows slower ones', () => {
    const unknown = plan({ list: list({ order: 'unknown' }) });
    expect(planTransfersRead(unknown).mode).toBe('full');
    expect(planTransfersRead({ ...unknown, unorderedScanEveryMs: HOUR }).mode).toBe('skip');
    expect(planTransfersRead({ ...unknown, unorderedScanEveryMs: HOUR / 4 }).mode).toBe('full');
  });

  it('says how stale transfers may be only when slower unordered scans are allowed', () => {
    const settings = { TRANSFERS_UNORDERED_SCAN_EVERY: HOUR, SYNC_EVERY: 5 * 60_000 };
    expect(transfersStaleness(list({ order: 'unknown' }), settings)).toBe(HOUR + 5 * 60_000);
    expect(transfersStaleness(list({}), settings)).toBeNull();
    expect(
      transfersStaleness(list({ order: 'unknown' }), { ...settings, TRANSFERS_UNORDERED_SCAN_EVERY: 0 }),
    ).toBeNull();
  });

  it('puts the staleness in one line for status, naming the setting', async () => {
    const settings = { TRANSFERS_UNORDERED_SCAN_EVERY: HOUR, SYNC_EVERY: 5 * 60_000 };
    const unknown = { list: async () => list({ order: 'unknown' }) };
    expect(await transfersFreshness(unknown, 'default', settings)).toMatch(
      /^default transfers may be up to 1h 5m stale: .*TRANSFERS_UNORDERED_SCAN_EVERY/,
    );
    const ordered = { list: async () => list({}) };
    expect(await transfersFreshness(ordered, 'default', settings)).toBeNull();
  });
});

describe('confirmedCopies: records listed more than once, as evidence', () => {
  const listing = (over: Partial<Listing> = {}): Listing => ({
    entries: 43,
    distinct: 42,
    total: 43,
    copiesKey: 'k1',
    ...over,
  });

  it('two full reads with the same ids and copies confirm them; the window is complete with its copies', () => {
    expect(confirmedCopies([listing()])).toBeNull();
    expect(confirmedCopies([listing(), listing()])).toBe(1);
    const e = { kind: 'backfill' as const, reads: 2, distinct: 42, maxTotal: 43, firstReadPages: 2 };
    expect(
      decideWindow({ ...e, addedByLastRead: 0, canSplit: true, confirmedCopies: 1, copiesSeen: true }),
    ).toEqual({ verdict: 'complete', duplicates: 1 });
  });

  it('reads that disagree on the copies, or that fell short of total entries, confirm nothing', () => {
    expect(confirmedCopies([listing(), listing({ copiesKey: 'k2' })])).toBeNull();
    expect(confirmedCopies([listing({ entries: 42 }), listing({ entries: 42 })])).toBeNull();
    expect(confirmedCopies([listing({ copiesKey: null }), listing({ copiesKey: null })])).toBeNull();
    const e = { kind: 'backfill' as const, reads: 2, distinct: 42, maxTotal: 43, firstReadPages: 2 };
    const v = decideWindow({
      ...e,
      addedByLastRead: 0,
      canSplit: false,
      confirmedCopies: null,
      copiesSeen: true,
    });
    expect(v).toMatchObject({ verdict: 'incomplete', reason: 'DUPLICATES_UNCONFIRMED' });
  });
});
