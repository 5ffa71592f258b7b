import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import type pg from 'pg';
import { loadPage } from '../src/warehouse/loader.js';
import { createTestDatabase, type TestDatabase } from './helpers/db.js';
import { makePayment, makeTransfer } from './helpers/records.js';

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

  it('payment_status_funnel counts payments per status reached and the time to reach it', async () => {
    const { rows } = await db.pool.query(
      `SELECT status, payments, pct_of_all, extract(epoch FROM median_time_to_reach)::int AS median_s
         FROM reporting.payment_status_funnel`,
    );
    expect(rows).toEqual([
      { status: 'PENDING', payments: 2, pct_of_all: '100.00', median_s: 60 },
      { status: 'COMPLETE', payments: 1, pct_of_all: '50.00', median_s: 600 },
    ]);
  });
});
