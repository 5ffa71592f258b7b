/**
 * The workbook's summary sheet, the sheet it opens on (pure): summary.csv's rows (the same SQL) with,
 * under each stream's total of all statuses, its settled money (status COMPLETE) as a row of its own, the
 * same under the grand total, and the day's quarantined records per stream as summary.csv has them
 * (counted, never summed: they have no exact amount). Totals rows are bold; the amount column follows the
 * one-look rule (xlsx-cells.ts).
 */
import { SUMMARY_HEADER } from './pack-query.js';
import { amountCell, amountLook, countCell, textCell, type AmountLook, type Cell } from './xlsx-cells.js';
import type { SheetColumn } from './xlsx-sheet.js';

export interface SettledRow {
  /** null: both streams. */
  stream: string | null;
  records: number | string;
  amount: string;
}

export interface SummaryInput {
  /** SUMMARY_SQL's rows, in its order and SUMMARY_HEADER's columns. */
  rows: readonly unknown[][];
  settled: readonly SettledRow[];
  quarantined: { payments: number; transfers: number };
  /** The manifest's close facts (absent: no close rows). */
  close?: CloseFacts;
}

/** What the manifest says of finance's close, read structurally (manifest.ts imports the workbook's types). */
export interface CloseFacts {
  digests?: { payments: string; transfers: string };
  restatedAfterSignoff?: { note: string } | null;
  /** The day was blocked when published (manifest `blocked`): each reason with what to do. */
  blocked?: Array<{
    source: string;
    stream: string;
    failures: number;
    reasons: Array<{ code: string; meaning: string; action: string }>;
  }>;
}

/** A blocked day's reasons, one row each: the code, what it means and what to do (manifest `blocked`). */
function blockedValues(close: CloseFacts): unknown[][] {
  return (close.blocked ?? []).flatMap((b) =>
    b.reasons.map((r) => [
      'blocked',
      b.stream,
      `${b.source}: ${r.code} after ${b.failures} failed runs: ${r.meaning}; what to do: ${r.action}`,
      null,
      null,
      null,
      null,
    ]),
  );
}

/**
 * Finance's close under the figures: each stream's records digest (docs/finance.md says how to recompute
 * it) and the sign-off: that this version restates a day finance had signed off (a fact that stays
 * true), else where the day's sign-off state lives (this file never changes).
 */
function closeValues(close: CloseFacts): unknown[][] {
  const row = (level: string, stream: string | null, text: string) => [
    level,
    stream,
    text,
    null,
    null,
    null,
    null,
  ];
  const out = (['payments', 'transfers'] as const).flatMap((s) =>
    close.digests ? [row('records digest', s, close.digests[s])] : [],
  );
  const r = close.restatedAfterSignoff;
  out.push(
    r
      ? row('sign-off', null, `restated after sign-off: ${r.note}`)
      : row(
          'sign-off',
          null,
          "the day's sign-off state: the day's top manifest.json, `paysync signoff --list`",
        ),
  );
  return out;
}

export interface SummarySheet {
  columns: SheetColumn[];
  rows: Cell[][];
  look: AmountLook;
}

const WIDTHS: Record<string, number> = {
  level: 15,
  stream: 11,
  status: 11,
  transaction_type: 16,
  service_mobile_code: 20,
  records: 11,
  amount: 22,
};
const at = (name: (typeof SUMMARY_HEADER)[number]) => SUMMARY_HEADER.indexOf(name);
const AMOUNT = at('amount');
const RECORDS = at('records');
const TOTAL_LEVELS = new Set(['stream_total', 'stream_settled', 'total', 'total_settled']);

const text = (v: unknown) => textCell(v === null || v === undefined ? null : String(v));

/** The summary rows, settled and quarantined rows in place, as values in SUMMARY_HEADER's columns. */
export function summaryValues(input: SummaryInput): unknown[][] {
  const settled = (stream: string | null) => input.settled.find((s) => s.stream === stream);
  const out: unknown[][] = [];
  for (const row of input.rows) {
    out.push([...row]);
    const [level, stream] = row as [string, string | null];
    if (level !== 'stream_total' && level !== 'total') continue;
    const s = settled(level === 'total' ? null : stream);
    const label = level === 'total' ? 'total_settled' : 'stream_settled';
    out.push([
      label,
      level === 'total' ? null : stream,
      'COMPLETE',
      null,
      null,
      s?.records ?? 0,
      s?.amount ?? '0',
    ]);
  }
  for (const stream of ['payments', 'transfers'] as const) {
    out.push(['quarantined', stream, null, null, null, input.quarantined[stream], null]);
  }
  if (input.close) out.push(...blockedValues(input.close), ...closeValues(input.close));
  return out;
}

export function summarySheet(input: SummaryInput): SummarySheet {
  const values = summaryValues(input);
  const look = amountLook(values.map((r) => (r[AMOUNT] === null ? null : String(r[AMOUNT]))));
  const rows = values.map((r) => {
    const bold = TOTAL_LEVELS.has(String(r[0]));
    return r.map((v, j): Cell => {
      const cell =
        j === AMOUNT
          ? amountCell(v === null ? null : String(v), look)
          : j === RECORDS
            ? countCell(v)
            : text(v);
      return bold ? { ...cell, bold: true } : cell;
    });
  });
  const columns = SUMMARY_HEADER.map((header) => ({ header, width: WIDTHS[header] ?? 16 }));
  return { columns, rows, look };
}
