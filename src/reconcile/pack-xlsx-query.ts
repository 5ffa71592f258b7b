/**
 * What the pack's workbook reads, and how its records sheets map the records files' columns. The records
 * sheets are made from the same COPY as payments.csv and transfers.csv (pack-query.ts's PAYMENTS_FILE and
 * TRANSFERS_FILE), so their columns are those files' columns, in their order, each time split in two
 * (the wall clock in REPORT_TIMEZONE, the exact UTC text). Everything here is read inside the export's
 * REPEATABLE READ snapshot. $1, $2: the day's instant range [start, end).
 */
import { DAY_REJECTS_FROM, DAY_REJECTS_ORDER } from './pack-rejects.js';
import { PAYMENTS_FILE, TRANSFERS_FILE, utcIsoSql, type PackFile } from './pack-query.js';
import type { RecordColumnKind } from './xlsx-record-rows.js';
import type { SheetColumn } from './xlsx-sheet.js';

export type ColumnKind = 'text' | 'json' | 'amount' | 'time' | 'count';

/** A column of a sheet read with a query (rejects): how its cell is typed and the SQL printing it. */
export interface QueryColumn {
  header: string;
  kind: ColumnKind;
  /** Width in characters (a `time` column: its date-time cell; the UTC text gets its own). */
  width: number;
  sql: string;
}

export interface RecordsSheet {
  name: 'payments' | 'transfers';
  file: PackFile;
  /** The kind of each field of the file's CSV. */
  kinds: readonly RecordColumnKind[];
  /** Widths by the file's header (a `time` field: its date-time cell). */
  widths: Record<string, number>;
}

const TIME_WIDTH = 23;
const UTC_WIDTH = 25;

/** Each field's kind, by its header in the file; a field not named is text. */
const kindsOf = (file: PackFile, named: Record<string, RecordColumnKind>): RecordColumnKind[] =>
  file.columns.map((c) => named[c.header] ?? 'text');
const TIMES = { createdAt: 'time', updatedAt: 'time' } as const;

export const PAYMENTS_SHEET: RecordsSheet = {
  name: 'payments',
  file: PAYMENTS_FILE,
  kinds: kindsOf(PAYMENTS_FILE, { amount: 'amount', extra_data: 'json', ...TIMES }),
  widths: {
    id: 24,
    reference: 16,
    amount: 16,
    description: 34,
    status: 11,
    transaction_type: 14,
    phone: 15,
    service_mobile_code: 13,
    extra_data: 30,
    organization_id: 16,
    api_key_id: 16,
  },
};

export const TRANSFERS_SHEET: RecordsSheet = {
  name: 'transfers',
  file: TRANSFERS_FILE,
  kinds: kindsOf(TRANSFERS_FILE, { amount: 'amount', ...TIMES }),
  widths: { id: 24, reference: 16, amount: 16, name: 28, phone: 15, service_mobile_code: 13, status: 11 },
};

/** A time column as the two columns of a sheet: its wall clock in `zone`, its exact UTC text. */
export function timeColumns(header: string, zone: string, width: number, utcWidth: number): SheetColumn[] {
  return [
    { header: `${header} (${zone})`, width },
    { header: `${header} UTC`, width: utcWidth },
  ];
}

/** The sheet's columns: the file's, each time column as two (timeColumns). */
export function recordsColumns(sheet: RecordsSheet, zone: string): SheetColumn[] {
  return sheet.file.columns.flatMap((c, i) =>
    sheet.kinds[i] === 'time'
      ? timeColumns(c.header, zone, TIME_WIDTH, UTC_WIDTH)
      : [{ header: c.header, width: sheet.widths[c.header] ?? 16 }],
  );
}

/**
 * Whether every amount of the day's records (of one table) is a number a spreadsheet shows exactly: at
 * most 15 significant digits and 30 decimals (xlsx-cells.ts's isExactNumber, in SQL). Decides the amount
 * column's look before its first row is written, so the records' COPY waits for it: numeric arithmetic
 * rather than text. An amount below 10^(15 - its scale) has at most 15 digits from its first non-zero
 * one to its last; only a larger one (zeros at its end, or not exact) has its digits counted as text.
 * NaN and infinities have no scale: not exact.
 */
export function allAmountsExactSql(table: string): string {
  return `SELECT coalesce(bool_and(coalesce(scale(amount) <= 30
                   AND (abs(amount) < power(10::numeric, 15 - scale(amount))
                        OR length(trim(both '0' from translate(amount::text, '-.', ''))) <= 15), false)), true) AS exact
            FROM ${table}
           WHERE created_at >= $1 AND created_at < $2`;
}

/**
 * Settled money (status COMPLETE) per stream and for both: records and exact sum, one row per stream
 * that has any, then the grand row (stream NULL).
 */
export const SETTLED_SQL = `
  WITH d AS (
    SELECT 'payments'::text AS stream, amount FROM reporting.payments
     WHERE created_at >= $1 AND created_at < $2 AND status = 'COMPLETE'
    UNION ALL
    SELECT 'transfers'::text, amount FROM reporting.transfers
     WHERE created_at >= $1 AND created_at < $2 AND status = 'COMPLETE'
  )
  SELECT stream, count(*)::bigint AS records, coalesce(sum(amount), 0)::text AS amount
    FROM d GROUP BY GROUPING SETS ((stream), ()) ORDER BY grouping(stream), stream`;

const col = (header: string, kind: ColumnKind, width: number, sql = header): QueryColumn => ({
  header,
  kind,
  width,
  sql,
});

export const REJECTS_COLUMNS: readonly QueryColumn[] = [
  col('source', 'text', 14),
  col('stream', 'text', 10),
  col('record_id', 'text', 26),
  col('reference', 'text', 20),
  col('reason', 'text', 50),
  col('createdAt (as sent)', 'text', 26, 'created_text'),
  col('first seen', 'time', 24, 'first_seen_at'),
  col('last seen', 'time', 24, 'last_seen_at'),
  col('times seen', 'count', 11, 'times_seen'),
  col('raw record', 'json', 60, 'raw::text'),
  col('raw text (not JSON)', 'text', 40, 'raw_text'),
];

const WALL = `'YYYY-MM-DD"T"HH24:MI:SS.MS'`;

/** The select list of a query sheet: a `time` column gives (wall clock in `zone`, UTC ISO text). */
export function selectList(columns: readonly QueryColumn[], zone: string): string {
  return columns
    .map((c) =>
      c.kind === 'time'
        ? `to_char(${c.sql} AT TIME ZONE ${zone}::text, ${WALL}), ${utcIsoSql(c.sql)}`
        : c.sql,
    )
    .join(', ');
}

/**
 * The day's rejects, the same records as rejects.csv (pack-rejects.ts's selection), with more columns.
 * $1, $2: the day's instant range; $3: the day; $4: REPORT_TIMEZONE.
 */
export const REJECTS_SHEET_SQL = `
  SELECT ${selectList(REJECTS_COLUMNS, '$4')}
    FROM ${DAY_REJECTS_FROM}
   ORDER BY ${DAY_REJECTS_ORDER}`;
