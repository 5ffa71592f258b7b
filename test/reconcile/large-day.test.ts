/**
 * A day the warehouse holds and the service does not list (a service that lost a day, or a warehouse
 * loaded from elsewhere) is reconciled like any other, however many records it holds: every one is a
 * difference, recorded with its id. 150k records: beyond what spreading them as call arguments allows
 * (that would fail with "RangeError: Maximum call stack size exceeded").
 */
import { describe, expect, it } from '@jest/globals';
import { insertSyntheticDay } from '../../bench/export-fixture.js';
import { reconcileDay } from '../../src/reconcile/reconcile.js';
import { harnessFor } from '../helpers/sync-harness.js';

const RECORDS = 150_000;

describe('reconcile of a day the service does not list', () => {
  const harness = harnessFor({ name: 'reconcilelarge', sim: { days: 2, perDay: 20 } });

  it('records every one of 150k warehouse records as a difference', async () => {
    const h = harness();
    const day = '2026-10-01'; // before the simulator's days: it lists nothing then
    await insertSyntheticDay(h.runtime.pool, day, 'UTC', RECORDS);
    // the synthetic day's source is 'bench': reconcile compares the configured source, so move it
    await h.runtime.pool.query("UPDATE reporting.payments SET source = 'default' WHERE source = 'bench'");
    const result = await reconcileDay(h.runtime, day);
    const payments = result.rows.filter((r) => r.stream === 'payments');
    expect(payments.reduce((n, r) => n + r.warehouse, 0)).toBe(RECORDS);
    expect(payments.reduce((n, r) => n + r.service, 0)).toBe(0);
    expect(result.differences.filter((d) => d.stream === 'payments')).toHaveLength(RECORDS);
    const { rows } = await h.runtime.pool.query(
      `SELECT count(*)::int AS n, count(DISTINCT record_id)::int AS ids FROM reporting.reconcile_records
        WHERE day = $1 AND stream = 'payments'`,
      [day],
    );
    expect(rows[0]).toEqual({ n: RECORDS, ids: RECORDS });
  });
});
