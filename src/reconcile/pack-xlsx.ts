/**
 * pack.xlsx: the day's pack as a typed workbook for people, beside the CSVs (which stay the machines'
 * file). Sheets: payments, transfers, summary, rejects (only when the day has any), about.
 *
 * What it guarantees:
 * - The same instant as the rest of the pack: every row is read on the export's connection, inside its
 *   REPEATABLE READ transaction (records through a server-side cursor, a batch at a time).
 * - Cells that tell the truth (xlsx-cells.ts): ids, references, phones and free text as text (never a
 *   formula, no apostrophe), amounts as numbers with a fixed format when exact and as highlighted text
 *   otherwise, times as date-time cells in REPORT_TIMEZONE plus the exact UTC text; summary sums from
 *   SQL. The workbook holds no formula at all.
 * - Flat memory whatever the day's size (streaming writer, drained between batches: xlsx-sheet.ts).
 * - The same bytes for the same content: no clock is read (the document's dates are the day's start,
 *   the zip entries' dates fixed afterwards by xlsx-zip.ts), sheets and entries come in a fixed order.
 */
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import type ExcelJS from 'exceljs';
import type { ClientBase } from 'pg';
import { aboutRows } from './pack-xlsx-about.js';
import {
  maxScaleSql,
  PAYMENTS_SHEET,
  recordsCursorSql,
  REJECTS_COLUMNS,
  REJECTS_SHEET_SQL,
  TRANSFERS_SHEET,
  type RecordsSheet,
  type SheetColumn,
} from './pack-xlsx-query.js';
import { SUMMARY_HEADER, SUMMARY_SQL } from './pack-query.js';
import type { WrittenFile } from './pack-writer.js';
import { scaleOf } from './xlsx-cells.js';
import { TableWriter, writeFreeSheet, type TableReport } from './xlsx-sheet.js';
import { fixZipEntryDates, hashFile } from './xlsx-zip.js';

export const WORKBOOK_FILE = 'pack.xlsx';
/** The name of the performance measure each workbook write records (node:perf_hooks timeline). */
export const WORKBOOK_MEASURE = 'paysync:pack.xlsx';
/** Records fetched from the cursor at a time. */
const BATCH = 2_000;

export interface WorkbookFile extends WrittenFile {
  path: string;
  /** Data rows per sheet (header rows not counted). */
  sheets: Record<string, number>;
}

/** The manifest's entry for the workbook (absent from versions written before paysync wrote one). */
export interface WorkbookEntry {
  xlsx?: WorkbookFile;
}

export interface WorkbookInput {
  /** The day's instant range [start, end) in REPORT_TIMEZONE. */
  range: [Date, Date];
  /** The local day (YYYY-MM-DD): its latest reconcile places rejects whose createdAt cannot. */
  day: string;
  zone: string;
  /** The folder the pack is being written to. */
  dir: string;
  /** The manifest being published (read for the about sheet). */
  manifest: object;
  /** Rows per sheet, header included (Excel's limit unless a test sets it lower). */
  maxRowsPerSheet?: number;
}

interface Written {
  tables: Record<string, TableReport>;
  decimals: Record<string, number>;
}

async function writeRecords(
  client: ClientBase,
  wb: ExcelJS.stream.xlsx.WorkbookWriter,
  sheet: RecordsSheet,
  input: WorkbookInput,
  out: Written,
): Promise<void> {
  const { rows } = await client.query<{ scale: number }>(maxScaleSql(sheet), input.range);
  const decimals = Math.min(rows[0]?.scale ?? 0, 15);
  const table = new TableWriter(wb, {
    name: sheet.name,
    columns: sheet.columns,
    zone: input.zone,
    decimals,
    maxRows: input.maxRowsPerSheet,
  });
  const cursor = `pack_xlsx_${sheet.name}`;
  await client.query(recordsCursorSql(sheet, cursor), [...input.range, input.zone]);
  // a batch goes out of scope before the wait for the zip: held across it, it would outlive young-
  // generation collections and pile up in the old one (V8 frees that lazily: peak RSS would grow with the day)
  const fetchAndAdd = async (): Promise<number> => {
    const batch = await client.query<unknown[]>({ text: `FETCH ${BATCH} FROM ${cursor}`, rowMode: 'array' });
    for (const row of batch.rows) table.add(row);
    return batch.rows.length;
  };
  while ((await fetchAndAdd()) === BATCH) await table.drain();
  await client.query(`CLOSE ${cursor}`);
  out.tables[sheet.name] = table.end();
  out.decimals[sheet.name] = decimals;
}

/** The summary as summary.csv has it (same SQL), amounts and counts typed. */
async function writeSummary(
  client: ClientBase,
  wb: ExcelJS.stream.xlsx.WorkbookWriter,
  input: WorkbookInput,
  out: Written,
): Promise<void> {
  const { rows } = await client.query<unknown[]>({
    text: SUMMARY_SQL,
    values: input.range,
    rowMode: 'array',
  });
  const columns: SheetColumn[] = SUMMARY_HEADER.map((header) => ({
    header,
    kind: header === 'amount' ? 'amount' : header === 'records' ? 'count' : 'text',
    width: header === 'amount' ? 20 : 18,
    sql: header,
  }));
  const amountAt = SUMMARY_HEADER.indexOf('amount' as (typeof SUMMARY_HEADER)[number]);
  const decimals = Math.min(15, Math.max(0, ...rows.map((r) => scaleOf(String(r[amountAt] ?? '')))));
  const table = new TableWriter(wb, { name: 'summary', columns, zone: input.zone, decimals });
  for (const row of rows) table.add(row);
  for (const row of closeRows(input.manifest as CloseFacts)) table.add(row);
  out.tables.summary = table.end();
}

/** The manifest's close facts, as manifest.ts writes them (read structurally: that module imports this one). */
interface CloseFacts {
  digests?: { payments: string; transfers: string };
  restatedAfterSignoff?: { note: string } | null;
}

/**
 * Finance's close on the summary sheet: the records digest of each stream (docs/finance.md says how to
 * recompute it), and the sign-off: whether this version restates a day finance had signed off (a fact
 * that stays true), else where the day's sign-off state lives (this file never changes).
 */
function closeRows(m: CloseFacts): unknown[][] {
  const row = (level: string, stream: string, text: string) => [level, stream, text, null, null, null, null];
  const out = (['payments', 'transfers'] as const).flatMap((s) =>
    m.digests ? [row('records digest', s, m.digests[s])] : [],
  );
  const r = m.restatedAfterSignoff;
  out.push(
    r
      ? row('sign-off', '', `restated after sign-off: ${r.note}`)
      : row(
          'sign-off',
          '',
          "the day's sign-off state: the day's top manifest.json, `paysync signoff --list`",
        ),
  );
  return out;
}

/** The day's rejects (a sheet only when there are any). */
async function writeRejects(
  client: ClientBase,
  wb: ExcelJS.stream.xlsx.WorkbookWriter,
  input: WorkbookInput,
  out: Written,
): Promise<boolean> {
  const { rows } = await client.query<unknown[]>({
    text: REJECTS_SHEET_SQL,
    values: [...input.range, input.day, input.zone],
    rowMode: 'array',
  });
  if (rows.length === 0) return false;
  const table = new TableWriter(wb, {
    name: 'rejects',
    columns: REJECTS_COLUMNS,
    zone: input.zone,
    decimals: 0,
  });
  for (const row of rows) table.add(row);
  out.tables.rejects = table.end();
  return true;
}

/**
 * Writes `pack.xlsx` into `input.dir` from `client`'s current transaction (the export's snapshot) and
 * returns its rows per sheet, size and SHA-256 (of the final bytes, entry dates fixed).
 */
export async function writePackWorkbook(client: ClientBase, input: WorkbookInput): Promise<WorkbookFile> {
  const started = performance.now();
  // loaded on first use: exceljs costs about 1 s and 28 MB to load, which no other command should pay
  const { default: excel } = await import('exceljs');
  const path = join(input.dir, WORKBOOK_FILE);
  const stream = createWriteStream(path, { flags: 'wx' });
  const wb = new excel.stream.xlsx.WorkbookWriter({ stream, useStyles: true, useSharedStrings: false });
  // no clock: the document's own dates are the day's start
  Object.assign(wb, {
    creator: 'paysync',
    lastModifiedBy: 'paysync',
    created: input.range[0],
    modified: input.range[0],
  });
  const out: Written = { tables: {}, decimals: {} };
  try {
    await writeRecords(client, wb, PAYMENTS_SHEET, input, out);
    await writeRecords(client, wb, TRANSFERS_SHEET, input, out);
    await writeSummary(client, wb, input, out);
    const hasRejects = await writeRejects(client, wb, input, out);
    const about = aboutRows({ manifest: input.manifest as Record<string, unknown>, ...out, hasRejects });
    writeFreeSheet(wb, 'about', about, [30, 24, 66, 20, 20, 20, 20]);
    await wb.commit();
  } catch (error) {
    stream.destroy();
    throw error;
  }
  await fixZipEntryDates(path);
  const { sha256, bytes } = await hashFile(path);
  const sheets: Record<string, number> = {};
  for (const [name, report] of Object.entries(out.tables)) sheets[name] = report.rows;
  const rows = (sheets.payments ?? 0) + (sheets.transfers ?? 0);
  // its share of an export's time, for bench/export.ts (one entry per workbook: a few a day)
  performance.measure(WORKBOOK_MEASURE, { start: started });
  return { path: WORKBOOK_FILE, rows, bytes, sha256, sheets };
}
