/**
 * The SQL of the reconciliation pack. Every query takes the day as the instant range [$1, $2) (the local
 * day's window in REPORT_TIMEZONE, computed by sync/windows.ts) and, where a day is stored, the day as
 * $3; the records files' COPY takes the same range as literals. Text is produced by Postgres where it is
 * cheapest and exact: amounts are NUMERIC printed as stored, timestamps are printed as the service writes
 * them (ISO 8601 UTC with milliseconds), ids sort bytewise (COLLATE "C") so the order never depends on the
 * database's locale.
 */
import type { PackCsvColumns } from './pack-csv.js';

/** The SQL printing timestamptz `column` as the service writes instants: ISO 8601 UTC, milliseconds, `Z`. */
export const utcIsoSql = (column: string) =>
  `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/** One column of a records file: the service's field name (the header) and the SQL printing it. */
interface PackColumn {
  header: string;
  sql: string;
  /** Free text from the service, neutralised by pack-csv.ts. */
  freeText: boolean;
}

export interface PackFile {
  name: 'payments' | 'transfers';
  table: string;
  columns: readonly PackColumn[];
  /** Index of the jsonb column, printed compactly by pack-csv.ts, or -1. */
  json: number;
}

/** Free text from the service: '' sent as NULL (COPY would quote it; the pack writes the empty cell). */
const text = (header: string, expr: string = header): PackColumn => ({
  header,
  sql: `NULLIF(${expr}, '')`,
  freeText: true,
});
const exact = (header: string, sql: string): PackColumn => ({ header, sql, freeText: false });

export const PAYMENTS_FILE: PackFile = {
  name: 'payments',
  table: 'reporting.payments',
  columns: [
    text('id'),
    text('reference'),
    exact('amount', 'amount::text'),
    text('description'),
    text('status'),
    text('transaction_type'),
    text('phone'),
    text('service_mobile_code'),
    text('extra_data', 'extra_data::text'),
    exact('createdAt', utcIsoSql('created_at')),
    exact('updatedAt', utcIsoSql('updated_at')),
    text('organization_id'),
    text('api_key_id'),
  ],
  json: 8,
};

export const TRANSFERS_FILE: PackFile = {
  name: 'transfers',
  table: 'reporting.transfers',
  columns: [
    text('id'),
    text('reference'),
    exact('amount', 'amount::text'),
    text('name'),
    text('phone'),
    text('service_mobile_code'),
    text('status'),
    exact('createdAt', utcIsoSql('created_at')),
    exact('updatedAt', utcIsoSql('updated_at')),
  ],
  json: -1,
};

/** What pack-csv.ts needs to know of a records file's columns. */
export function packCsvColumns(file: PackFile): PackCsvColumns {
  const freeText = file.columns.flatMap((c, i) => (c.freeText ? [i] : []));
  return { freeText, json: file.json };
}

/**
 * The COPY writing one records file: every record created in [start, end), ordered by createdAt then id.
 * COPY takes no bind parameters, so the two instants come as SQL literals (escapeLiteral of an ISO text).
 */
export function recordsCopySql(file: PackFile, start: string, end: string): string {
  const select = file.columns.map((c) => `${c.sql} AS "${c.header}"`).join(', ');
  return `COPY (SELECT ${select} FROM ${file.table}
                 WHERE created_at >= ${start}::timestamptz AND created_at < ${end}::timestamptz
                 ORDER BY created_at, id COLLATE "C")
          TO STDOUT WITH (FORMAT csv, HEADER)`;
}

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

/**
 * OPEN_RECORDS_SQL for many days at once ($1, $2: the range; $3: REPORT_TIMEZONE): per local day, the
 * records not yet in a final state (the status page's calendar). The same statuses as above: keep the two
 * together.
 */
export const OPEN_RECORDS_BY_DAY_SQL = `
  SELECT day, sum(n)::bigint AS open FROM (
    SELECT (created_at AT TIME ZONE $3)::date::text AS day, count(*) AS n FROM reporting.payments
     WHERE created_at >= $1 AND created_at < $2 AND status NOT IN ('COMPLETE', 'FAILED', 'TIMEOUT') GROUP BY 1
    UNION ALL
    SELECT (created_at AT TIME ZONE $3)::date::text, count(*) FROM reporting.transfers
     WHERE created_at >= $1 AND created_at < $2 AND status NOT IN ('COMPLETE', 'FAILED') GROUP BY 1
  ) o GROUP BY day`;

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
export const SNAPSHOT_DELETE_SQL = `DELETE FROM reporting.export_snapshot_days WHERE day = $1`;

/** One row per stream with records (sql/009); read back through the view reporting.export_snapshot. */
export const SNAPSHOT_INSERT_SQL = `
  INSERT INTO reporting.export_snapshot_days (day, stream, ids, statuses, amounts, updated_ats)
  SELECT $3::date, stream, array_agg(id), array_agg(status), array_agg(amount), array_agg(updated_at)
    FROM (${DAY_RECORDS}) r
   GROUP BY stream`;
