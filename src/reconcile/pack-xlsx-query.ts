/**
 * The SQL of the pack's workbook, read on the export's own connection inside its REPEATABLE READ
 * snapshot (the same instant as the CSVs, the summary and the manifest). $1, $2: the day's instant range
 * [start, end); $3: REPORT_TIMEZONE. Each sheet column says how its cell is typed (xlsx-cells.ts):
 * `time` columns are selected twice, as the wall clock in REPORT_TIMEZONE and as the exact UTC ISO text.
 */
import { DAY_REJECTS_FROM, DAY_REJECTS_ORDER } from './pack-rejects.js';

export type ColumnKind = 'text' | 'json' | 'amount' | 'time' | 'count';

export interface SheetColumn {
  header: string;
  kind: ColumnKind;
  /** Column width in characters (a `time` column: its date-time cell; the UTC text gets its own). */
  width: number;
  /** The SQL expression (for `time`, the timestamptz column). */
  sql: string;
}

export interface RecordsSheet {
  name: 'payments' | 'transfers';
  table: string;
  columns: readonly SheetColumn[];
}

const col = (header: string, kind: ColumnKind, width: number, sql = header): SheetColumn => ({
  header,
  kind,
  width,
  sql,
});

export const PAYMENTS_SHEET: RecordsSheet = {
  name: 'payments',
  table: 'reporting.payments',
  columns: [
    col('id', 'text', 26),
    col('reference', 'text', 20),
    col('amount', 'amount', 18, 'amount::text'),
    col('description', 'text', 40),
    col('status', 'text', 11),
    col('transaction_type', 'text', 17),
    col('phone', 'text', 16),
    col('service_mobile_code', 'text', 19),
    col('extra_data', 'json', 40, 'extra_data::text'),
    col('createdAt', 'time', 24, 'created_at'),
    col('updatedAt', 'time', 24, 'updated_at'),
    col('organization_id', 'text', 20),
    col('api_key_id', 'text', 20),
  ],
};

export const TRANSFERS_SHEET: RecordsSheet = {
  name: 'transfers',
  table: 'reporting.transfers',
  columns: [
    col('id', 'text', 26),
    col('reference', 'text', 20),
    col('amount', 'amount', 18, 'amount::text'),
    col('name', 'text', 30),
    col('phone', 'text', 16),
    col('service_mobile_code', 'text', 19),
    col('status', 'text', 11),
    col('createdAt', 'time', 24, 'created_at'),
    col('updatedAt', 'time', 24, 'updated_at'),
  ],
};

const ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
const WALL = `'YYYY-MM-DD"T"HH24:MI:SS.MS'`;

/** The select list of a sheet's columns: a `time` column gives (wall clock in `zone`, UTC ISO text). */
export function selectList(columns: readonly SheetColumn[], zone = '$3'): string {
  return columns
    .map((c) =>
      c.kind === 'time'
        ? `to_char(${c.sql} AT TIME ZONE ${zone}::text, ${WALL}), to_char(${c.sql} AT TIME ZONE 'UTC', ${ISO})`
        : c.sql,
    )
    .join(', ');
}

/** A cursor over the day's records, in the CSV's order (createdAt, then id bytewise). */
export function recordsCursorSql(sheet: RecordsSheet, cursor: string): string {
  return `DECLARE ${cursor} NO SCROLL CURSOR FOR
            SELECT ${selectList(sheet.columns)} FROM ${sheet.table}
             WHERE created_at >= $1 AND created_at < $2
             ORDER BY created_at, id COLLATE "C"`;
}

/**
 * The most decimals an amount of the day has, among the amounts a spreadsheet number can hold (at most
 * 15 significant digits): the amount column's format shows that many. (One amount too long for a number
 * is text anyway and must not give every other amount its decimals.)
 */
export function maxScaleSql(sheet: RecordsSheet): string {
  return `SELECT coalesce(max(scale(amount))
                   FILTER (WHERE length(trim(both '0' from translate(amount::text, '-.', ''))) <= 15), 0)::int AS scale
            FROM ${sheet.table}
           WHERE created_at >= $1 AND created_at < $2`;
}

export const REJECTS_COLUMNS: readonly SheetColumn[] = [
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

/**
 * The day's rejects, the same records as rejects.csv (pack-rejects.ts's selection), with more columns.
 * $1, $2: the day's instant range; $3: the day; $4: REPORT_TIMEZONE.
 */
export const REJECTS_SHEET_SQL = `
  SELECT ${selectList(REJECTS_COLUMNS, '$4')}
    FROM ${DAY_REJECTS_FROM}
   ORDER BY ${DAY_REJECTS_ORDER}`;
