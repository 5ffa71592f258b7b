/**
 * The views rebuilt for years of history (sql/014) answer exactly what their first definitions (006)
 * answered, whatever the writes in between:
 * - reporting.daily_totals, read from the trigger-kept table, equals the grouping of the records (count
 *   and exact amount, compared as numbers) after a real sync, inserts, upserts that change status,
 *   amount, operator or day, re-reads that change nothing, deletes, two loads at once on the same
 *   groups, and in a time zone that is not kept (grouped from the records) and once it is added;
 */
import { describe, expect, it } from '@jest/globals';
import type { Pool } from 'pg';
import { insertSyntheticDay } from '../../bench/export-fixture.js';
import { harnessFor, syncAll } from '../helpers/sync-harness.js';

/** 006's daily_totals, as a query. */
const RAW_DAILY_TOTALS = `
  SELECT 'payments'::text AS stream, (p.created_at AT TIME ZONE current_setting('TimeZone'))::date AS day,
         p.status, p.transaction_type, p.service_mobile_code, count(*)::bigint AS records, sum(p.amount) AS amount
    FROM reporting.payments p GROUP BY 2, 3, 4, 5
  UNION ALL
  SELECT 'transfers'::text, (t.created_at AT TIME ZONE current_setting('TimeZone'))::date, t.status,
         'TRANSFER'::text, t.service_mobile_code, count(*)::bigint, sum(t.amount)
    FROM reporting.transfers t GROUP BY 2, 3, 5`;

/** Rows of the view missing from the records' grouping and the other way round (both empty: equal). */
async function totalsDifference(
  pool: Pool,
  zone = 'UTC',
): Promise<{ onlyView: unknown[]; onlyRecords: unknown[] }> {
  const client = await pool.connect();
  try {
    await client.query(`SET TIME ZONE '${zone}'`);
    const diff = async (a: string, b: string) =>
      (await client.query(`SELECT * FROM (${a}) x EXCEPT ALL SELECT * FROM (${b}) y ORDER BY 1, 2, 3, 4, 5`))
        .rows;
    const view = 'SELECT * FROM reporting.daily_totals';
    return { onlyView: await diff(view, RAW_DAILY_TOTALS), onlyRecords: await diff(RAW_DAILY_TOTALS, view) };
  } finally {
    await client.query('RESET TIME ZONE');
    client.release();
  }
}

const EQUAL = { onlyView: [], onlyRecords: [] };

describe('reporting.daily_totals kept by triggers', () => {
  const harness = harnessFor({ name: 'historyviews', sim: { days: 3, perDay: 60 } });

  it('equals the grouping of the records after a sync and every kind of write', async () => {
    const h = harness();
    const pool = h.runtime.pool;
    await syncAll(h);
    expect(
      Number((await pool.query('SELECT count(*) AS n FROM reporting.payments')).rows[0].n),
    ).toBeGreaterThan(0);
    expect(await totalsDifference(pool)).toEqual(EQUAL);
    // the kept table is what the view read (not the fallback)
    expect(
      Number(
        (await pool.query("SELECT count(*) AS n FROM reporting.daily_totals_by_zone WHERE zone = 'UTC'"))
          .rows[0].n,
      ),
    ).toBeGreaterThan(0);

    await insertSyntheticDay(pool, '2026-10-01', 'UTC', 3_000);
    expect(await totalsDifference(pool)).toEqual(EQUAL);

    // Upserts like the loader's: some change status, amount (scale too), operator, or move across midnight;
    // some change nothing but synced_at (a re-read).
    await pool.query(`
      INSERT INTO reporting.payments (id, reference, amount, description, status, transaction_type, phone,
          service_mobile_code, extra_data, created_at, updated_at, organization_id, api_key_id, source)
      SELECT id, reference,
             CASE WHEN n % 7 = 0 THEN amount + 0.01 WHEN n % 11 = 0 THEN round(amount, 0) ELSE amount END,
             description,
             CASE WHEN n % 3 = 0 THEN 'COMPLETE' ELSE status END, transaction_type, phone,
             CASE WHEN n % 13 = 0 THEN NULL ELSE service_mobile_code END, extra_data,
             CASE WHEN n % 17 = 0 THEN created_at + interval '20 hours' ELSE created_at END,
             updated_at + interval '1 minute', organization_id, api_key_id, source
        FROM (SELECT p.*, row_number() OVER (ORDER BY id) AS n FROM reporting.payments p) s
      ON CONFLICT (id) DO UPDATE SET amount = EXCLUDED.amount, status = EXCLUDED.status,
          service_mobile_code = EXCLUDED.service_mobile_code, created_at = EXCLUDED.created_at,
          updated_at = EXCLUDED.updated_at, synced_at = now()`);
    await pool.query('UPDATE reporting.payments SET synced_at = now()');
    await pool.query(
      "UPDATE reporting.transfers SET status = 'FAILED' WHERE id IN (SELECT id FROM reporting.transfers LIMIT 5)",
    );
    expect(await totalsDifference(pool)).toEqual(EQUAL);

    await pool.query(
      "DELETE FROM reporting.payments WHERE id LIKE 'pay_20261001_%' AND right(id, 1) IN ('3', '7')",
    );
    await pool.query(
      'DELETE FROM reporting.transfers WHERE id IN (SELECT id FROM reporting.transfers LIMIT 3)',
    );
    expect(await totalsDifference(pool)).toEqual(EQUAL);
  });

  it('stays exact when two loads change the same groups at once', async () => {
    const h = harness();
    const pool = h.runtime.pool;
    const a = await pool.connect();
    const b = await pool.connect();
    try {
      await a.query('BEGIN');
      await b.query('BEGIN');
      const insert = (client: typeof a, tag: string) =>
        client.query(
          `INSERT INTO reporting.payments (id, reference, amount, description, status, transaction_type,
              service_mobile_code, created_at, updated_at, organization_id, api_key_id, source)
           SELECT 'pay_race_${tag}_' || g, 'R', 10.25, 'x', (ARRAY['COMPLETE','FAILED'])[1 + g % 2], 'PAYMENT',
                  (ARRAY['MTN_BJ','MOOV_BJ'])[1 + (g / 2) % 2], '2026-10-02T10:00:00Z'::timestamptz + g * interval '1 hour',
                  now(), 'org', 'key', 'default'
             FROM generate_series(1, 40) g`,
        );
      await insert(a, 'a');
      const second = insert(b, 'b'); // waits on a's group rows
      await a.query('COMMIT');
      await second;
      await b.query('COMMIT');
    } finally {
      a.release();
      b.release();
    }
    expect(await totalsDifference(pool)).toEqual(EQUAL);
  });

  it('groups the records in a zone that is not kept, and keeps it once added', async () => {
    const h = harness();
    const pool = h.runtime.pool;
    expect(await totalsDifference(pool, 'Asia/Kathmandu')).toEqual(EQUAL); // +05:45: no whole-hour zone
    await pool.query("SELECT reporting.add_daily_totals_zone('Asia/Kathmandu')");
    await insertSyntheticDay(pool, '2026-10-03', 'Asia/Kathmandu', 500);
    expect(await totalsDifference(pool, 'Asia/Kathmandu')).toEqual(EQUAL);
    expect(await totalsDifference(pool, 'UTC')).toEqual(EQUAL);
  });
});
