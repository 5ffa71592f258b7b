/**
 * Reconcile's count check for records listed more than once (src/reconcile/counted-copies.ts), pure: a
 * copy sync confirmed is one record plus one copy, a quarantined record is not a copy, and a status whose
 * count (copies counted) is not warehouse + quarantined is flagged with the reason.
 */
import { describe, expect, it } from '@jest/globals';
import { countCopies, flagCountedCopies, steadyCounts } from '../../src/reconcile/counted-copies.js';
import type { ReconcileRow } from '../../src/reconcile/reconcile-row.js';

const row = (status: string, service: number, warehouse: number, quarantined = 0): ReconcileRow => ({
  source: 's',
  stream: 'payments',
  method: 'paged-confirm',
  status,
  service,
  warehouse,
  difference: service - warehouse,
  quarantined,
  unexplained: service - warehouse - quarantined,
  serviceAmount: null,
  warehouseAmount: '0',
});
const counts = (entries: Array<[string, number]>) =>
  new Map(entries.map(([s, count]) => [s, { count, amount: null }]));
const always = () => true;

describe('countCopies', () => {
  it('counts each listing beyond the first in its status, where sync confirmed copies', () => {
    const c = countCopies(
      [
        { id: 'a', createdAt: 1, statuses: ['COMPLETE', 'COMPLETE'] },
        { id: 'b', createdAt: 2, statuses: ['FAILED', 'FAILED', 'FAILED'] },
        { id: 'c', createdAt: 3, statuses: ['PENDING', 'PENDING'] },
      ],
      (at) => at !== 3,
    );
    expect(c.byStatus).toEqual(
      new Map([
        ['COMPLETE', 1],
        ['FAILED', 2],
      ]),
    );
    expect(c.unrecorded).toEqual(new Map([['PENDING', 1]])); // no window recorded c's copy: not counted
    expect(c.contradicted.size).toBe(0);
  });
  it('a record without an id listed again with the same text is one record, whatever the windows say', () => {
    const c = countCopies([{ id: null, createdAt: null, statuses: ['(none)', '(none)'] }], () => false);
    expect(c.byStatus).toEqual(new Map([['(none)', 1]]));
  });
  it('copies in different statuses mark both statuses contradicted', () => {
    const c = countCopies([{ id: 'a', createdAt: 1, statuses: ['COMPLETE', 'FAILED'] }], always);
    expect([...c.contradicted].sort()).toEqual(['COMPLETE', 'FAILED']);
  });
});

describe('flagCountedCopies', () => {
  const copiesIn = (status: string) =>
    countCopies([{ id: 'a', createdAt: 1, statuses: [status, status] }], always);

  it('copies counted as copies and quarantined records apart: no flag', () => {
    // COMPLETE: 10 listed (2 malformed, quarantined), 1 copy; the service counts 11 listings
    const compared = { rows: [row('COMPLETE', 10, 8, 2)], differences: [] };
    expect(flagCountedCopies(compared, counts([['COMPLETE', 11]]), copiesIn('COMPLETE'))).toEqual(compared);
  });
  it('a copy in place of a record never listed: both statuses flagged, with a difference each', () => {
    // the list shows 5 COMPLETE (one twice) and 3 FAILED; the service counts 5 and 4, the warehouse 5 and 3
    const compared = { rows: [row('COMPLETE', 5, 5), row('FAILED', 3, 3)], differences: [] };
    const out = flagCountedCopies(
      compared,
      counts([
        ['COMPLETE', 5],
        ['FAILED', 4],
      ]),
      copiesIn('COMPLETE'),
    );
    expect(out.rows.map((r) => [r.status, r.service, r.warehouse, r.unexplained])).toEqual([
      ['COMPLETE', 4, 5, -1],
      ['FAILED', 4, 3, 1],
    ]);
    expect(out.differences.map((d) => [d.kind, d.id, d.serviceStatus ?? d.warehouseStatus])).toEqual([
      ['missing_at_source', null, 'COMPLETE'],
      ['missing_in_warehouse', null, 'FAILED'],
    ]);
    expect(out.differences[1]!.reason).toMatch(/a copy may stand in place of a record never listed/);
    expect(out.differences[0]!.reason).toContain('listed twice: a');
  });
  it('a status whose count moved while the list was read is not checked; the others are', () => {
    const compared = { rows: [row('COMPLETE', 5, 5), row('FAILED', 3, 3)], differences: [] };
    const steady = steadyCounts(
      counts([
        ['COMPLETE', 6],
        ['FAILED', 3],
      ]),
      counts([
        ['COMPLETE', 5],
        ['FAILED', 3],
        ['PENDING', 1],
      ]),
    );
    expect(steady).toEqual(
      new Map([
        ['COMPLETE', null],
        ['FAILED', { count: 3, amount: null }],
        ['PENDING', null],
      ]),
    );
    expect(flagCountedCopies(compared, steady, countCopies([], always))).toEqual(compared);
  });
  it('a status already flagged record by record, or with contradicting copies, is left as it is', () => {
    const compared = { rows: [row('COMPLETE', 6, 5), row('FAILED', 3, 3)], differences: [] };
    const contradicted = countCopies([{ id: 'a', createdAt: 1, statuses: ['FAILED', 'COMPLETE'] }], always);
    const out = flagCountedCopies(
      compared,
      counts([
        ['COMPLETE', 9],
        ['FAILED', 9],
      ]),
      contradicted,
    );
    expect(out).toEqual(compared);
  });
});
