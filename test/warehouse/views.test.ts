import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type pg from 'pg';
import { loadPage } from '../../src/warehouse/loader.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makePayment, makeTransfer } from '../helpers/records.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('views');
  const p1 = makePayment({
    id: 'v1',
    status: 'PENDING',
    amount: '10.10',
    createdAt: '2024-05-01T22:30:00Z',
    updatedAt: '2024-05-01T22:31:00Z',
  });
  const p2 = makePayment({
    id: 'v2',
    status: 'PENDING',
    amount: '0.05',
    createdAt: '2024-05-01T10:00:00Z',
    updatedAt: '2024-05-01T10:01:00Z',
  });
  await loadPage(db.pool, {
    source: 's',
    stream: 'payments',
    organizationId: null,
    records: [p1, p2],
    rejects: [],
  });
  await loadPage(db.pool, {
    source: 's',
    stream: 'payments',
    organizationId: null,
    records: [{ ...p1, status: 'COMPLETE', updatedAt: '2024-05-01T22:40:00Z' }],
    rejects: [],
  });
  const t = makeTransfer({ amount: '7', createdAt: '2024-05-01T10:00:00Z' });
  await loadPage(db.pool, {
    source: 's',
    stream: 'transfers',
    organizationId: 'o',
    records: [t],
    rejects: [],
  });
});
afterAll(async () => {
  await db.drop();
});

async function inZone<T extends pg.QueryResultRow>(zone: string, sql: string): Promise<T[]> {
  const client = await db.pool.connect();
  try {
    await client.query(`SET TIME ZONE '${zone}'`);
    return (await client.query<T>(sql)).rows;
  } finally {
    await client.query('RESET TIME ZONE');
    client.release();
  }
}

describe('analyst views', () => {
  it('daily_totals groups by the day of the session time zone, with exact sums', async () => {
    const sql = `SELECT stream, day, status, records, amount FROM reporting.daily_totals ORDER BY stream, day, status`;
    expect(await inZone('UTC', sql)).toEqual([
      { stream: 'payments', day: '2024-05-01', status: 'COMPLETE', records: 1, amount: '10.10' },
      { stream: 'payments', day: '2024-05-01', status: 'PENDING', records: 1, amount: '0.05' },
      { stream: 'transfers', day: '2024-05-01', status: 'COMPLETE', records: 1, amount: '7' },
    ]);
    const nairobi = await inZone<{ day: string }>('Africa/Nairobi', sql);
    expect(nairobi.map((r) => r.day)).toEqual(['2024-05-01', '2024-05-02', '2024-05-01']);
  });

  it('payment_statuses_observed counts payments seen in each status and in it now, not a funnel', async () => {
    // median_update_after_creation is the service's updatedAt - createdAt on the first copy in the status
    // (1 and 10 minutes here), not when paysync saw it (now, years after 2024); the former name
    // median_seen_after_creation stays as an alias of the same figure.
    const { rows } = await db.pool.query(
      `SELECT status, payments_seen_in, payments_now_in,
              extract(epoch FROM median_update_after_creation)::int AS median_s,
              extract(epoch FROM p90_update_after_creation)::int AS p90_s,
              extract(epoch FROM median_seen_after_creation)::int AS alias_median_s,
              extract(epoch FROM p90_seen_after_creation)::int AS alias_p90_s
         FROM reporting.payment_statuses_observed`,
    );
    expect(rows).toEqual(
      [
        { status: 'PENDING', payments_seen_in: 2, payments_now_in: 1, median_s: 60, p90_s: 60 },
        { status: 'COMPLETE', payments_seen_in: 1, payments_now_in: 1, median_s: 600, p90_s: 600 },
      ].map((r) => ({ ...r, alias_median_s: r.median_s, alias_p90_s: r.p90_s })),
    );
  });

  it('payment_status_transitions lists the observed moves between statuses', async () => {
    const { rows } = await db.pool.query(
      `SELECT from_status, to_status, payments, extract(epoch FROM median_between)::int AS s
         FROM reporting.payment_status_transitions`,
    );
    expect(rows).toEqual([{ from_status: 'PENDING', to_status: 'COMPLETE', payments: 1, s: 540 }]);
  });

  it('sync_health: lag from the end of the contiguous completed run, never negative, first gap shown', async () => {
    const window = (start: string, end: string, fetched: string, outcome = 'complete') =>
      db.pool.query(
        `INSERT INTO reporting.sync_windows (source, stream, window_start, window_end, kind, fetched_at, records,
           pages, outcome, first_fetched_at)
         VALUES ('h', 'payments', $1, $2, 'backfill', $3, 0, 1, $4, $3)`,
        [start, end, fetched, outcome],
      );
    const base = Date.now();
    const hour = (h: number) => new Date(base + h * 3_600_000).toISOString();
    await window(hour(-30), hour(-20), hour(-19));
    await window(hour(-21), hour(-10), hour(-9));
    await window(hour(-10), hour(-8), hour(-8), 'failed'); // a failed run covers nothing
    await window(hour(-6), hour(+24), hour(-1)); // after the gap; a backfill of today ends at midnight
    const { rows } = await db.pool.query(
      `SELECT complete_from, complete_until, first_gap_from, first_gap_to,
              extract(epoch FROM lag)::int AS lag_s
         FROM reporting.sync_health WHERE source = 'h'`,
    );
    expect(rows).toHaveLength(1);
    const r = rows[0];
    expect(r.complete_from.toISOString()).toBe(hour(-30));
    expect(r.complete_until.toISOString()).toBe(hour(-10));
    expect([r.first_gap_from.toISOString(), r.first_gap_to.toISOString()]).toEqual([hour(-10), hour(-6)]);
    expect(r.lag_s).toBeGreaterThanOrEqual(10 * 3600);

    await window(hour(-10), hour(-6), hour(-5)); // the gap filled: the run reaches the last fetch
    const healed = await db.pool.query(
      `SELECT complete_until, first_gap_from, extract(epoch FROM lag)::int AS lag_s
         FROM reporting.sync_health WHERE source = 'h'`,
    );
    expect(healed.rows[0].complete_until.toISOString()).toBe(hour(-1)); // its fetch time, not midnight
    expect(healed.rows[0].first_gap_from).toBeNull();
    expect(healed.rows[0].lag_s).toBeGreaterThanOrEqual(0);
  });
});
