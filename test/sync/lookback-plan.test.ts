/** What makes a lookback read skippable (pure): the service's count, the records held, the open ones. */
import { describe, expect, it } from '@jest/globals';
import { decideLookback, decideMoved, worthCounting } from '../../src/sync/lookback-plan.js';

const days = (open: number[]) =>
  open.map((o) => ({ held: 2500, open: o ? { PENDING: o } : ({} as Record<string, number>) }));
const base = { total: 7500, held: 7500, statusFilter: true, pageSize: 100 };

describe('the lookback: what can still change is read, and only that', () => {
  it('nothing open and the count holds: nothing is read', () => {
    expect(decideLookback({ ...base, windows: days([0, 0, 0]) }).windows).toEqual(['done', 'done', 'done']);
  });

  it('a count that differs (a record appeared late), no total, or a record on a bound: every window in full', () => {
    for (const e of [{ total: 7501 }, { total: null }, { held: null }]) {
      const plan = decideLookback({ ...base, ...e, windows: days([0, 3, 0]) });
      expect(plan.windows).toEqual(['full', 'full', 'full']);
    }
    expect(decideLookback({ ...base, total: 7501, windows: days([0, 0, 0]) }).why).toMatch(
      /lists 7501 records, 7500 are held/,
    );
  });

  it('open records are read by status when the service honours it and that is cheaper', () => {
    const plan = decideLookback({ ...base, windows: days([0, 300, 20]) });
    expect(plan.windows).toEqual(['done', 'by-status', 'by-status']);
    expect(plan.why).toMatch(/read by status \(4 requests against 50\)/); // the PENDING list only
    const both = [{ held: 2500, open: { INIT: 3, PENDING: 150 } }];
    expect(decideLookback({ ...base, total: 2500, held: 2500, windows: both }).why).toMatch(
      /read by status \(3 requests against 25\)/,
    );
  });

  it('without the filter, or when a full read is cheaper, the windows with open records are read in full', () => {
    expect(decideLookback({ ...base, statusFilter: false, windows: days([0, 300, 0]) }).windows).toEqual([
      'done',
      'full',
      'done',
    ]);
    // pages of 1000: a day is 3 pages; its 2,400 open records by status would take 2 + 3
    const big = decideLookback({ ...base, pageSize: 1000, windows: days([2400, 0, 0]) });
    expect(big.windows).toEqual(['full', 'done', 'done']);
  });

  it('the service is asked for its count only when that can pay for itself', () => {
    expect(worthCounting({ ...base, windows: days([0, 0, 0]) })).toBe(true); // 1 request against 75
    // a day in one page: three pages in full against a count plus the two status lists
    const open = { INIT: 5, PENDING: 40 };
    const small = { ...base, pageSize: 1000, windows: [200, 200, 200].map((held) => ({ held, open })) };
    expect(worthCounting(small)).toBe(false);
    expect(worthCounting({ ...small, windows: small.windows.map((w) => ({ ...w, open: {} })) })).toBe(true);
    expect(worthCounting({ ...base, held: null, windows: days([0, 0, 0]) })).toBe(false);
  });

  it('after the status lists: moved records one by one, unless the lists cannot be trusted or that costs more', () => {
    const ok = { complete: true, off: 0, moved: 3, fullCost: 25 };
    expect(decideMoved(ok).read).toBe('each');
    expect(decideMoved({ ...ok, moved: 0 }).read).toBe('each');
    expect(decideMoved({ ...ok, complete: false }).read).toBe('full');
    expect(decideMoved({ ...ok, off: 1 }).why).toMatch(/the filter is not honoured/);
    expect(decideMoved({ ...ok, moved: 25 }).read).toBe('full');
  });
});
