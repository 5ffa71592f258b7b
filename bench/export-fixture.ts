/**
 * A synthetic day of payments written straight into the warehouse in one SQL statement (fast enough for
 * 200k rows in a test or a benchmark): realistic text, formula-looking descriptions, phones, exact
 * amounts with and without decimals, extra_data objects, spread evenly over the local day.
 */
import type { Pool } from 'pg';
import { dayWindow } from '../src/sync/windows.js';

export async function insertSyntheticDay(
  pool: Pool,
  day: string,
  zone: string,
  count: number,
): Promise<void> {
  const { start, end } = dayWindow(day, zone);
  const stepMs = (end.getTime() - start.getTime()) / count;
  await pool.query(
    `INSERT INTO reporting.payments (id, reference, amount, description, status, transaction_type, phone,
        service_mobile_code, extra_data, created_at, updated_at, organization_id, api_key_id, source)
     SELECT 'pay_' || $1 || '_' || lpad(g::text, 7, '0'), 'REF' || (g * 7919 % 10000000000),
            CASE WHEN g % 3 = 0 THEN (100 + g % 50000)::numeric ELSE round((100 + g % 50000) + (g % 100) / 100.0, 2) END,
            CASE WHEN g % 50 = 0 THEN '=HYPERLINK("http://x")' ELSE 'Order #' || g || ' "bench", line ' || g % 7 END,
            (ARRAY['COMPLETE','COMPLETE','FAILED','PENDING','TIMEOUT','INIT'])[1 + g % 6],
            (ARRAY['PAYMENT','DIRECT_PAYMENT','TRANSFERT','RECHARGE'])[1 + g % 4],
            '+2299' || lpad((g % 10000000)::text, 7, '0'),
            (ARRAY['MTN_BJ','MOOV_BJ','ORANGE_CI','WAVE_SN'])[1 + g % 4],
            jsonb_build_object('orderId', g, 'channel', (ARRAY['web','ussd','app'])[1 + g % 3]),
            $2::timestamptz + (g - 1) * $3 * interval '1 millisecond',
            $2::timestamptz + (g - 1) * $3 * interval '1 millisecond' + interval '1 minute',
            'org_' || g % 20, 'key_' || g % 40, 'bench'
       FROM generate_series(1, $4::int) g`,
    [day.replaceAll('-', ''), start, Math.floor(stepMs), count],
  );
}
