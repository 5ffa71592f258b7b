/**
 * The pure core of reconcile and pack finality, no server needed: record-by-record comparison with the
 * quarantine, the mismatch rule (amounts only where the service gives them), coverage gaps, the heal's
 * re-read targets, and compact raw JSON for rejects.csv.
 */
import { describe, expect, it } from '@jest/globals';
import { firstGap } from '../../src/reconcile/coverage.js';
import { rereadTargets } from '../../src/reconcile/heal.js';
import { compactJson } from '../../src/reconcile/pack-rejects.js';
import { compareDay } from '../../src/reconcile/record-diff.js';
import { compareTallies, isMismatch } from '../../src/reconcile/reconcile-table.js';

const base = { source: 's', stream: 'payments' as const, method: 'paged' };

describe('compareDay', () => {
  it('explains a listed record paysync holds in sync_rejects as quarantined, not as a difference', () => {
    const { rows, differences } = compareDay(
      base,
      [
        { id: 'a', status: 'COMPLETE', amount: '10.50' },
        { id: 'bad', status: 'REFUNDED', amount: '3' },
        { id: null, status: 'COMPLETE', amount: null },
      ],
      [{ id: 'a', status: 'COMPLETE', amount: '10.5' }],
      {
        byId: new Map([['bad', 'status: invalid']]),
        anonymous: [{ status: 'COMPLETE', reason: 'id: null' }],
      },
    );
    expect(rows.map((r) => [r.status, r.service, r.warehouse, r.quarantined, r.unexplained])).toEqual([
      ['COMPLETE', 2, 1, 1, 0],
      ['REFUNDED', 1, 0, 1, 0],
    ]);
    expect(rows.some(isMismatch)).toBe(false);
    expect(rows[0]).toMatchObject({ serviceAmount: '10.5', warehouseAmount: '10.5' }); // quarantined left out
    expect(differences.map((d) => [d.kind, d.id, d.reason])).toEqual([
      ['quarantined', 'bad', 'status: invalid'],
      ['quarantined', null, 'id: null'],
    ]);
  });

  it('names each record that differs: missing either side, status or amount different', () => {
    const { rows, differences } = compareDay(
      base,
      [
        { id: 'a', status: 'COMPLETE', amount: '1' },
        { id: 'b', status: 'FAILED', amount: '2' },
        { id: 'c', status: 'COMPLETE', amount: '3.00' },
      ],
      [
        { id: 'b', status: 'PENDING', amount: '2' },
        { id: 'c', status: 'COMPLETE', amount: '3.01' },
        { id: 'z', status: 'COMPLETE', amount: '9' },
      ],
      { byId: new Map(), anonymous: [] },
    );
    expect(differences.map((d) => `${d.kind} ${d.id}`)).toEqual([
      'missing_in_warehouse a',
      'different b',
      'different c',
      'missing_at_source z',
    ]);
    expect(rows.filter(isMismatch).map((r) => r.status)).toEqual(['COMPLETE', 'FAILED', 'PENDING']);
  });
});

describe('isMismatch', () => {
  it('never counts amounts a wrapper total cannot give', () => {
    const rows = compareTallies(
      { ...base, method: 'wrapper-total' },
      new Map([['COMPLETE', { count: 220, amount: null }]]),
      new Map([['COMPLETE', { count: 220, amount: '1000' }]]),
      ['COMPLETE', 'FAILED'],
    );
    expect(rows.map((r) => [r.status, r.serviceAmount, isMismatch(r)])).toEqual([
      ['COMPLETE', null, false],
      ['FAILED', null, false],
    ]);
  });
});

describe('firstGap', () => {
  const day = { from: 0, to: 100 };
  it('is null when overlapping spans cover the whole day', () => {
    expect(
      firstGap(
        [
          { start: 40, end: 120 },
          { start: -10, end: 50 },
        ],
        day.from,
        day.to,
      ),
    ).toBeNull();
  });
  it('names the first uncovered part', () => {
    expect(
      firstGap(
        [
          { start: 0, end: 30 },
          { start: 50, end: 100 },
        ],
        day.from,
        day.to,
      ),
    ).toEqual({ start: 30, end: 100 });
    expect(firstGap([], day.from, day.to)).toEqual({ start: 0, end: 100 });
    expect(firstGap([{ start: 10, end: 100 }], day.from, day.to)).toEqual({ start: 0, end: 100 });
  });
});

it('rereadTargets: only what a re-read can fix, once per source and stream', () => {
  const d = (kind: string, stream = 'payments') =>
    ({
      source: 's',
      stream,
      kind,
      id: 'x',
      serviceStatus: null,
      warehouseStatus: null,
      serviceAmount: null,
      warehouseAmount: null,
      reason: null,
    }) as never;
  expect(rereadTargets([d('missing_at_source'), d('quarantined')])).toEqual([]);
  expect(
    rereadTargets([d('different'), d('missing_in_warehouse'), d('missing_in_warehouse', 'transfers')]),
  ).toEqual([
    { source: 's', stream: 'payments' },
    { source: 's', stream: 'transfers' },
  ]);
});

it('compactJson drops the spaces PostgreSQL prints, never inside strings, numbers exact', () => {
  expect(compactJson('{"a": 1.10, "b": [1, 2], "c": "x, y: \\"z\\" "}')).toBe(
    '{"a":1.10,"b":[1,2],"c":"x, y: \\"z\\" "}',
  );
});
