/** Naive baseline: the same rows upserted one INSERT per row, against the loader's one statement per page. */
import { randomBytes } from 'node:crypto';
import { loadPage } from '../../src/warehouse/loader.js';
import { migrate } from '../../src/warehouse/migrate.js';
import { createPool } from '../../src/warehouse/pool.js';
import { paymentRow } from '../../src/warehouse/stream-tables.js';
import { dropBenchDatabase } from '../bench-db.js';
import { benchPayments } from '../payments-fixture.js';

const ONE_ROW = `INSERT INTO reporting.payments (id, reference, amount, description, status, transaction_type, phone,
  service_mobile_code, extra_data, created_at, updated_at, organization_id, api_key_id, unknown_fields, source)
  VALUES ($1, $2, $3::numeric, $4, $5, $6, $7, $8, $9::jsonb, $10, $11, $12, $13, $14::json, 'bench')
  ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, updated_at = EXCLUDED.updated_at, synced_at = now()
  WHERE reporting.payments.updated_at < EXCLUDED.updated_at`;

export async function naiveVersusLoader(rows: number): Promise<{ naive: number; loader: number }> {
  const server = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/paysync');
  server.pathname = `/paysync_bench_${randomBytes(3).toString('hex')}`;
  const url = server.toString();
  await migrate(url);
  const pool = createPool(url, { max: 1 });
  const records = benchPayments(rows);
  try {
    let started = process.hrtime.bigint();
    for (const p of records) {
      await pool.query(ONE_ROW, paymentRow(p));
    }
    const naive = Number(process.hrtime.bigint() - started) / 1e9;
    await pool.query('TRUNCATE reporting.payments, reporting.payment_status_changes');
    started = process.hrtime.bigint();
    for (let i = 0; i < records.length; i += 1000) {
      await loadPage(pool, {
        source: 'bench',
        stream: 'payments',
        organizationId: null,
        records: records.slice(i, i + 1000),
        rejects: [],
      });
    }
    const loader = Number(process.hrtime.bigint() - started) / 1e9;
    return { naive, loader };
  } finally {
    await pool.end();
    await dropBenchDatabase(url);
  }
}
