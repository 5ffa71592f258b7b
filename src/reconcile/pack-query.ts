/**
 * The SQL of the reconciliation pack. Every query takes the day as the instant range [$1, $2) (the local
 * day's window in REPORT_TIMEZONE, computed by sync/windows.ts) and, where a day is stored, the day as
 * $3. Text is produced by Postgres where it is cheapest and exact: amounts are NUMERIC printed as stored,
 * timestamps are printed as the service writes them (ISO 8601 UTC with milliseconds), ids sort bytewise
 * (COLLATE "C") so the order never depends on the database's locale.
 */

const ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', ${ISO})`;

export interface PackFile {
  name: 'payments' | 'transfers';
  /** The service's own field names, in the service's order. */
  header: readonly string[];
  sql: string;
  /** Indexes of the columns that hold free text (neutralised against formula injection). */
  freeText: readonly number[];
  /** Index of the jsonb column printed compactly, or -1. */
  json: number;
}

export const PAYMENTS_FILE: PackFile = {
  name: 'payments',
  header: [
    'id',
    'reference',
    'amount',
    'description',
    'status',
    'transaction_type',
    'phone',
    'service_mobile_code',
    'extra_data',
    'createdAt',
    'updatedAt',
    'organization_id',
    'api_key_id',
  ],
  sql: `SELECT id, reference, amount::text, description, status, transaction_type, phone, service_mobile_code,
               extra_data::text, ${iso('created_at')}, ${iso('updated_at')}, organization_id, api_key_id
          FROM reporting.payments
         WHERE created_at >= $1 AND created_at < $2
         ORDER BY created_at, id COLLATE "C"`,
  freeText: [0, 1, 3, 4, 5, 6, 7, 8, 11, 12],
  json: 8,
};

export const TRANSFERS_FILE: PackFile = {
  name: 'transfers',
  header: [
    'id',
    'reference',
    'amount',
    'name',
    'phone',
    'service_mobile_code',
    'status',
    'createdAt',
    'updatedAt',
  ],
  sql: `SELECT id, reference, amount::text, name, phone, service_mobile_code, status,
               ${iso('created_at')}, ${iso('updated_at')}
          FROM reporting.transfers
         WHERE created_at >= $1 AND created_at < $2
         ORDER BY created_at, id COLLATE "C"`,
  freeText: [0, 1, 3, 4, 5, 6],
  json: -1,
};

/** The day's records of both streams, reduced to what a restatement compares. */
const DAY_RECORDS = `
  SELECT 'payments'::text AS stream, id, status, amount, updated_at FROM reporting.payments
   WHERE created_at >= $1 AND created_at < $2
  UNION ALL
  SELECT 'transfers'::text, id, status, amount, updated_at FROM reporting.transfers
   WHERE created_at >= $1 AND created_at < $2`;

export const SUMMARY_HEADER = [
  'level',
  'stream',
  'status',
  'transaction_type',
  'service_mobile_code',
  'records',
  'amount',
] as const;

/**
 * Count and exact sum per stream × status × type × operator, then per stream, then overall (GROUPING
 * SETS). Transfers have no transaction type: 'TRANSFER', as in the reporting.daily_totals view.
 */
export const SUMMARY_SQL = `
  WITH d AS (
    SELECT 'payments'::text AS stream, status, transaction_type, service_mobile_code, amount
      FROM reporting.payments WHERE created_at >= $1 AND created_at < $2
    UNION ALL
    SELECT 'transfers'::text, status, 'TRANSFER'::text, service_mobile_code, amount
      FROM reporting.transfers WHERE created_at >= $1 AND created_at < $2
  )
  SELECT CASE WHEN grouping(stream) = 1 THEN 'total'
              WHEN grouping(status) = 1 THEN 'stream_total' ELSE 'detail' END AS level,
         stream, status, transaction_type, service_mobile_code,
         count(*)::bigint AS records, coalesce(sum(amount), 0)::text AS amount
    FROM d
   GROUP BY GROUPING SETS ((stream, status, transaction_type, service_mobile_code), (stream), ())
   ORDER BY grouping(stream), stream, grouping(status), status COLLATE "C",
            transaction_type COLLATE "C", service_mobile_code COLLATE "C" NULLS FIRST`;

/** Records of the day not yet in a final state, per stream (decides final vs provisional). */
export const OPEN_RECORDS_SQL = `
  SELECT (SELECT count(*) FROM reporting.payments WHERE created_at >= $1 AND created_at < $2
             AND status NOT IN ('COMPLETE', 'FAILED', 'TIMEOUT'))::bigint AS payments,
         (SELECT count(*) FROM reporting.transfers WHERE created_at >= $1 AND created_at < $2
             AND status NOT IN ('COMPLETE', 'FAILED'))::bigint AS transfers`;

const DIFF = `
  WITH cur AS (${DAY_RECORDS}),
       snap AS (SELECT stream, id, status, amount, updated_at FROM reporting.export_snapshot WHERE day = $3)
  SELECT coalesce(c.stream, s.stream) AS stream, coalesce(c.id, s.id) AS id,
         s.status AS old_status, c.status AS new_status,
         s.amount::text AS old_amount, c.amount::text AS new_amount
    FROM cur c FULL JOIN snap s ON s.stream = c.stream AND s.id = c.id`;

/** What changed since the latest published version: added, removed, status or amount changed. */
export const CHANGES_SQL = `${DIFF}
   WHERE c.id IS NULL OR s.id IS NULL OR c.status <> s.status OR c.amount <> s.amount
   ORDER BY coalesce(c.stream, s.stream), coalesce(c.id, s.id) COLLATE "C"`;

/** Whether anything in the day moved since the latest version (updated_at too: any field may have). */
export const CHANGED_SINCE_SQL = `
  WITH cur AS (${DAY_RECORDS}),
       snap AS (SELECT stream, id, status, amount, updated_at FROM reporting.export_snapshot WHERE day = $3)
  SELECT EXISTS (
    SELECT 1 FROM cur c FULL JOIN snap s ON s.stream = c.stream AND s.id = c.id
     WHERE c.id IS NULL OR s.id IS NULL OR c.status <> s.status OR c.amount <> s.amount
        OR c.updated_at <> s.updated_at) AS changed`;

/** $1: the day. */
export const SNAPSHOT_DELETE_SQL = `DELETE FROM reporting.export_snapshot WHERE day = $1`;

export const SNAPSHOT_INSERT_SQL = `
  INSERT INTO reporting.export_snapshot (day, stream, id, status, amount, updated_at)
  SELECT $3::date, stream, id, status, amount, updated_at FROM (${DAY_RECORDS}) r`;
