/**
 * A small sheet read with a query (the rejects): its rows as typed cells (xlsx-cells.ts), each `time`
 * column as two (wall clock in REPORT_TIMEZONE, exact UTC text), flagged cells counted.
 */
import type { ClientBase } from 'pg';
import type { QueryColumn } from './pack-xlsx-query.js';
import {
  amountCell,
  amountLook,
  compactJsonText,
  textCell,
  wallClockCell,
  type Cell,
  type FlagReason,
} from './xlsx-cells.js';
import type { SheetColumn } from './xlsx-sheet.js';

export interface QueryRows {
  columns: SheetColumn[];
  rows: Cell[][];
  flags: Partial<Record<FlagReason, number>>;
}

const UTC_WIDTH = 26;

function sheetColumns(columns: readonly QueryColumn[], zone: string): SheetColumn[] {
  return columns.flatMap((c) =>
    c.kind === 'time'
      ? [
          { header: `${c.header} (${zone})`, width: c.width },
          { header: `${c.header} UTC`, width: UTC_WIDTH },
        ]
      : [{ header: c.header, width: c.width }],
  );
}

const asText = (v: unknown) => (v === null || v === undefined ? null : String(v));

function countCell(text: string | null): Cell {
  return text !== null && /^-?\d{1,15}$/.test(text) ? { value: Number(text), count: true } : textCell(text);
}

/** The rows of `sql` (array mode) typed by `columns`, whose `time` columns select two values each. */
export async function queryRows(
  client: ClientBase,
  sql: string,
  values: unknown[],
  columns: readonly QueryColumn[],
  zone: string,
): Promise<QueryRows> {
  const { rows } = await client.query<unknown[]>({ text: sql, values, rowMode: 'array' });
  const flags: QueryRows['flags'] = {};
  // the field each column starts at (a time column takes two)
  const at: number[] = [];
  columns.reduce((i, c) => (at.push(i), i + (c.kind === 'time' ? 2 : 1)), 0);
  const looks = columns.map((c, k) =>
    c.kind === 'amount' ? amountLook(rows.map((r) => asText(r[at[k] as number]))) : 'number',
  );
  const typed = rows.map((row) =>
    columns.flatMap((c, k): Cell[] => {
      const v = asText(row[at[k] as number]);
      switch (c.kind) {
        case 'time':
          return [wallClockCell(v), textCell(asText(row[(at[k] as number) + 1]))];
        case 'amount':
          return [amountCell(v, looks[k] ?? 'number')];
        case 'json':
          return [textCell(v === null ? null : compactJsonText(v))];
        case 'count':
          return [countCell(v)];
        default:
          return [textCell(v)];
      }
    }),
  );
  for (const cell of typed.flat()) if (cell.flag) flags[cell.flag] = (flags[cell.flag] ?? 0) + 1;
  return { columns: sheetColumns(columns, zone), rows: typed, flags };
}
