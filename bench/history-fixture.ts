/**
 * Years of history, generated straight into PostgreSQL (generate_series, not through the upstream): a
 * merchant with PER_DAY payments a day for DAYS days, ending yesterday (UTC), plus what syncing them
 * leaves behind: transfers, the sync log (a live window every 5 minutes and hourly backfill windows
 * per stream and day) and a few rejects. Old days are settled (COMPLETE, FAILED, TIMEOUT); the last two
 * still have open payments, as a live warehouse does.
 *
 * Kept on purpose (a 20M-row database takes a while): `bench/history.ts` measures it again and again,
 * and migrations added later apply to it like to a production warehouse. Secondary indexes are dropped
 * during the load and rebuilt from their own definitions afterwards (the same indexes, built once).
 * Not generated: payment/transfer status history and export snapshots (nothing measured reads them
 * across days).
 */
import pg from 'pg';
import { migrate } from '../src/warehouse/migrate.js';

export interface HistorySpec {
  days: number;
  perDay: number;
  transfersPerDay: number;
}

export function historyDatabaseUrl(serverUrl: string, spec: HistorySpec): string {
  const url = new URL(serverUrl);
  url.pathname = `/paysync_bench_history_${spec.days}d_${spec.perDay}`;
  return url.toString();
}

const DAY_MS = 86_400_000;

/** The first generated day (UTC midnight) for a history ending yesterday. */
export function firstDay(spec: HistorySpec, today = new Date()): Date {
  const midnight = Date.UTC(today.getUTCFullYear(), today.getUTCMonth(), today.getUTCDate());
  return new Date(midnight - spec.days * DAY_MS);
}

const PAYMENTS_SQL = `
  INSERT INTO reporting.payments (id, reference, amount, description, status, transaction_type, phone,
      service_mobile_code, extra_data, created_at, updated_at, organization_id, api_key_id, source,
      first_seen_at, synced_at)
  SELECT 'pay_h' || $1 || '_' || g, 'REF' || $1 || (g * 7919 % 100000000),
         CASE WHEN g % 3 = 0 THEN (100 + g % 50000)::numeric ELSE (100 + g % 50000) + (g % 100) / 100.0 END,
         'Order #' || g,
         CASE WHEN $5 AND g % 20 = 0 THEN (ARRAY['PENDING','INIT'])[1 + g % 2]
              ELSE (ARRAY['COMPLETE','COMPLETE','COMPLETE','COMPLETE','COMPLETE','COMPLETE','COMPLETE',
                          'COMPLETE','FAILED','TIMEOUT'])[1 + g % 10] END,
         (ARRAY['PAYMENT','DIRECT_PAYMENT','TRANSFERT','RECHARGE'])[1 + g % 4],
         '+2299' || lpad((g % 10000000)::text, 7, '0'),
         (ARRAY['MTN_BJ','MOOV_BJ','ORANGE_CI','WAVE_SN'])[1 + g % 4],
         jsonb_build_object('orderId', g),
         $2::timestamptz + (g - 1) * $3 * interval '1 millisecond',
         $2::timestamptz + (g - 1) * $3 * interval '1 millisecond' + interval '1 minute',
         'org_main', 'key_' || g % 4, 'default',
         $2::timestamptz + interval '1 day', $2::timestamptz + interval '1 day'
    FROM generate_series(1, $4::int) g`;

const TRANSFERS_SQL = `
  INSERT INTO reporting.transfers (id, reference, amount, name, phone, service_mobile_code, status,
      created_at, updated_at, source, organization_id, first_seen_at, synced_at)
  SELECT 'tr_h' || $1 || '_' || g, 'TREF' || $1 || g, (1000 + g % 90000)::numeric, 'Payee ' || g % 500,
         '+2299' || lpad((g % 10000000)::text, 7, '0'), (ARRAY['MTN_BJ','MOOV_BJ'])[1 + g % 2],
         CASE WHEN $5 AND g % 20 = 0 THEN 'PENDING' WHEN g % 10 = 0 THEN 'FAILED' ELSE 'COMPLETE' END,
         $2::timestamptz + (g - 1) * $3 * interval '1 millisecond',
         $2::timestamptz + (g - 1) * $3 * interval '1 millisecond' + interval '1 minute',
         'default', 'org_main', $2::timestamptz + interval '1 day', $2::timestamptz + interval '1 day'
    FROM generate_series(1, $4::int) g`;

/** The sync log of one day: 288 live windows (every 5 min) and 24 hourly backfill windows per stream. */
const WINDOWS_SQL = `
  INSERT INTO reporting.sync_windows (source, stream, window_start, window_end, kind, fetched_at, records,
      rejects, reported_total, pages, outcome, detail, attempts, first_fetched_at)
  SELECT 'default', s.stream, w.start, w.start + w.len, w.kind, w.start + w.len + interval '2 minutes',
         100, 0, 100, 1, CASE WHEN w.n % 500 = 0 THEN 'incomplete' ELSE 'complete' END, NULL, 1,
         w.start + w.len + interval '2 minutes'
    FROM (VALUES ('payments'), ('transfers')) s(stream),
         LATERAL (
           SELECT $1::timestamptz + n * interval '5 minutes' AS start, interval '5 minutes' + interval '1 second' AS len,
                  'live' AS kind, n FROM generate_series(0, 287) n
           UNION ALL
           SELECT $1::timestamptz + n * interval '1 hour', interval '1 hour', 'backfill', n + 1
             FROM generate_series(0, 23) n
         ) w`;

const REJECTS_SQL = `
  INSERT INTO reporting.sync_rejects (source, stream, record_id, raw, raw_hash, reason, first_seen_at,
      last_seen_at, resolved_at)
  SELECT 'default', 'payments', 'bad_' || $1 || '_' || g, jsonb_build_object('id', 'bad_' || $1 || '_' || g),
         md5($1 || g), 'amount: expected a number', $2::timestamptz, $2::timestamptz,
         CASE WHEN g = 1 AND $3 THEN NULL ELSE $2::timestamptz + interval '1 hour' END
    FROM generate_series(1, 5) g`;

/** Creates (once) and fills the history database; returns its URL. Prints progress per 10 days. */
export async function ensureHistory(
  serverUrl: string,
  spec: HistorySpec,
  say: (line: string) => void,
): Promise<string> {
  const url = historyDatabaseUrl(serverUrl, spec);
  await migrate(url);
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  try {
    const { rows } = await pool.query<{ n: string }>(
      "SELECT count(*) AS n FROM reporting.sync_windows WHERE kind = 'backfill'",
    );
    const daysLoaded = Number(rows[0]?.n ?? 0) / 48;
    if (daysLoaded >= spec.days) return url;
    if (daysLoaded > 0)
      throw new Error(`${url} is half-generated (${daysLoaded} days): drop it and run again`);
    const started = Date.now();
    const indexes = await pool.query<{ name: string; def: string }>(
      `SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS def
         FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid
        WHERE c.relnamespace = 'reporting'::regnamespace AND c.relname IN ('payments', 'transfers')
          AND NOT i.indisprimary AND NOT i.indisunique`,
    );
    for (const { name } of indexes.rows) await pool.query(`DROP INDEX ${name}`);
    const first = firstDay(spec);
    for (let d = 0; d < spec.days; d++) {
      const start = new Date(first.getTime() + d * DAY_MS);
      const tag = start.toISOString().slice(0, 10).replaceAll('-', '');
      const recent = d >= spec.days - 2;
      await pool.query('BEGIN');
      await pool.query(PAYMENTS_SQL, [tag, start, Math.floor(DAY_MS / spec.perDay), spec.perDay, recent]);
      await pool.query(TRANSFERS_SQL, [
        tag,
        start,
        Math.floor(DAY_MS / spec.transfersPerDay),
        spec.transfersPerDay,
        recent,
      ]);
      await pool.query(WINDOWS_SQL, [start]);
      await pool.query(REJECTS_SQL, [tag, start, d === spec.days - 1]);
      await pool.query('COMMIT');
      if ((d + 1) % 10 === 0 || d + 1 === spec.days)
        say(`  history: ${d + 1}/${spec.days} days (${Math.round((Date.now() - started) / 1000)} s)`);
    }
    for (const { name, def } of indexes.rows) {
      say(`  history: rebuilding ${name}`);
      await pool.query(def);
    }
    say('  history: VACUUM ANALYZE');
    await pool.query('VACUUM ANALYZE');
    say(`  history: generated in ${Math.round((Date.now() - started) / 1000)} s`);
    return url;
  } finally {
    await pool.end();
  }
}
