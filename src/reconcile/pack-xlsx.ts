/**
 * pack.xlsx: the day's pack as a typed workbook for people, beside the CSVs (which stay the machines'
 * files). Sheets, in the order a reader sees them: summary (it opens there), payments, transfers, rejects
 * (only when the day has any), about.
 *
 * What it guarantees:
 * - The same instant as the rest of the pack: the records sheets are made from the very COPY that writes
 *   payments.csv and transfers.csv (pack-xlsx-records.ts), the other sheets from queries on the export's
 *   connection, all in its REPEATABLE READ snapshot.
 * - Cells that tell the truth (xlsx-cells.ts): ids, references, phones and free text as text (never a
 *   formula, no apostrophe), amounts exact in one look per column, times as date-time cells in
 *   REPORT_TIMEZONE plus the exact UTC text; sums from SQL. The workbook holds no formula at all.
 * - Printable as it is: landscape, fitted to the page's width, header row on every page (xlsx-sheet.ts).
 * - Flat memory whatever the day's size: rows are made and deflated as the COPY's bytes pass.
 * - The same bytes for the same content: no clock is read (the document's date is the day's start, the
 *   ZIP's entries carry one fixed date), parts come in a fixed order.
 */
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import type { ClientBase } from 'pg';
import copyStreams from 'pg-copy-streams';
import { aboutRows, type TableReport } from './pack-xlsx-about.js';
import { amountLookOf, recordsSheetSink, type ByteSink, type WrittenSheet } from './pack-xlsx-records.js';
import {
  PAYMENTS_SHEET,
  REJECTS_COLUMNS,
  REJECTS_SHEET_SQL,
  SETTLED_SQL,
  TRANSFERS_SHEET,
  type RecordsSheet,
} from './pack-xlsx-query.js';
import { summarySheet, type CloseFacts, type SettledRow } from './pack-xlsx-summary.js';
import { recordsCopySql, SUMMARY_SQL } from './pack-query.js';
import type { WrittenFile } from './pack-writer.js';
import { queryRows, type QueryRows } from './xlsx-query-rows.js';
import { appXml, contentTypesXml, coreXml, rootRelsXml, workbookRelsXml, workbookXml } from './xlsx-book.js';
import { MAX_SHEET_ROWS, type AmountLook, type Cell } from './xlsx-cells.js';
import { smallSheetXml, type SheetColumn, type SheetFrame } from './xlsx-sheet.js';
import { stylesXml } from './xlsx-styles.js';
import { ZipWriter } from './xlsx-zip.js';

export const WORKBOOK_FILE = 'pack.xlsx';
/** The rejects sheet's stream column (no time column comes before it). */
const REJECTS_STREAM = REJECTS_COLUMNS.findIndex((c) => c.header === 'stream');
/**
 * zlib level of the workbook's parts. Measured on a 100k-payment sheet (76 MB of XML, cells after a
 * written one without their reference): level 1 deflates it in about 0.12 s to 7.5 MB; with every
 * cell's reference (92 MB) it took 0.27 s to 11.7 MB, level 3 0.39 s, level 6 (zlib's default) 0.88 s.
 */
export const WORKBOOK_DEFLATE_LEVEL = 1;

export interface WorkbookFile extends WrittenFile {
  path: string;
  /** Data rows per sheet (header rows not counted). */
  sheets: Record<string, number>;
}

/** The manifest's entry for the workbook (absent from versions written before paysync wrote one). */
export interface WorkbookEntry {
  xlsx?: WorkbookFile;
}

export interface WorkbookOptions {
  /** The local day (YYYY-MM-DD), named on printed pages; its latest reconcile places some rejects. */
  day: string;
  zone: string;
  /** Rows per sheet, header included (Excel's limit unless a test sets it lower). */
  maxRowsPerSheet?: number;
}

export interface FinishInput {
  /** The day's instant range [start, end) in REPORT_TIMEZONE. */
  range: [Date, Date];
  /** The manifest being published (read for the about sheet). */
  manifest: object;
}

/** A workbook being written into a folder: records sheets first (fed by the COPY), the rest at `finish`. */
export class PackWorkbook {
  private readonly written: WrittenSheet[] = [];
  private readonly tables: Record<string, TableReport> = {};
  private readonly looks: Record<string, AmountLook> = {};
  private parts = 0;
  /** SUMMARY_SQL's rows, when the caller already read them in the same snapshot (summary.csv's). */
  private summaryRows: unknown[][] | null = null;
  /** The rejects and settled rows, when read before `finish` (readSmallSheets). */
  private smallRows: SmallSheetRows | null = null;

  private constructor(
    private readonly zip: ZipWriter,
    private readonly options: WorkbookOptions,
  ) {}

  static open(dir: string, options: WorkbookOptions): PackWorkbook {
    const out = createWriteStream(join(dir, WORKBOOK_FILE), { flags: 'wx', flush: true });
    return new PackWorkbook(new ZipWriter(out, WORKBOOK_DEFLATE_LEVEL), options);
  }

  private nextPart = () => `xl/worksheets/sheet${++this.parts}.xml`;

  /**
   * The sink of `sheet`'s records file's CSV bytes. Its amount column's look is read first, on `client`
   * (which must be in the export's snapshot). Records sheets are written one after the other.
   */
  async recordsSink(client: ClientBase, sheet: RecordsSheet, range: [Date, Date]): Promise<ByteSink> {
    const look = await amountLookOf(client, sheet, range);
    return recordsSheetSink(
      {
        zip: this.zip,
        sheet,
        zone: this.options.zone,
        day: this.options.day,
        maxRows: this.options.maxRowsPerSheet ?? MAX_SHEET_ROWS,
        nextPart: this.nextPart,
        onSheet: (s) => this.written.push(s),
        onDone: (report, l) => {
          this.tables[sheet.name] = report;
          this.looks[sheet.name] = l;
        },
      },
      look,
    );
  }

  /** SUMMARY_SQL's rows as read for summary.csv in the export's snapshot: `finish` does not read them again. */
  useSummaryRows(rows: unknown[][]): void {
    this.summaryRows = rows;
  }

  /**
   * Reads the rejects sheet's and the settled subtotals' rows now, on `client` (in the export's snapshot),
   * so that `finish` does not: the export reads them while the records files' COPY runs on its other
   * connection, rather than after it.
   */
  async readSmallSheets(client: ClientBase, range: [Date, Date]): Promise<void> {
    this.smallRows = await readSmallSheetRows(client, range, this.options);
  }

  private async small(
    name: string,
    columns: readonly SheetColumn[],
    rows: Cell[][],
    table = true,
  ): Promise<void> {
    const frame: SheetFrame = { columns, table, selected: name === 'summary', day: this.options.day };
    const part = this.nextPart();
    await this.zip.addEntry(part, smallSheetXml(frame, rows));
    this.written.push({ name, part, frame, lastRow: table ? rows.length + 1 : rows.length });
  }

  /**
   * Writes the summary, rejects and about sheets and the package parts, and closes the file. `client`
   * must be in the export's snapshot. Returns the file's rows per sheet, size and SHA-256.
   */
  async finish(client: ClientBase, input: FinishInput): Promise<WorkbookFile> {
    const { rejects, settled } =
      this.smallRows ?? (await readSmallSheetRows(client, input.range, this.options));
    const quarantined = { payments: 0, transfers: 0 };
    for (const row of rejects.rows) {
      const stream = row[REJECTS_STREAM]?.value;
      if (stream === 'payments' || stream === 'transfers') quarantined[stream] += 1;
    }
    const summaryRows =
      this.summaryRows ??
      (await client.query<unknown[]>({ text: SUMMARY_SQL, values: input.range, rowMode: 'array' })).rows;
    const close = input.manifest as CloseFacts;
    const sheet = summarySheet({ rows: summaryRows, settled, quarantined, close });
    await this.small('summary', sheet.columns, sheet.rows);
    this.tables.summary = { rows: sheet.rows.length, sheets: ['summary'], flags: {} };
    this.looks.summary = sheet.look;
    if (rejects.rows.length > 0) {
      await this.small('rejects', rejects.columns, rejects.rows);
      this.tables.rejects = { rows: rejects.rows.length, sheets: ['rejects'], flags: rejects.flags };
    }
    const manifest = input.manifest as Record<string, unknown>;
    const about = aboutRows({
      manifest,
      tables: this.tables,
      looks: this.looks,
      hasRejects: rejects.rows.length > 0,
    });
    const widths = [30, 24, 66, 20, 20, 20, 20].map((width) => ({ header: '', width }));
    await this.small('about', widths, about, false);
    await this.parts_(input.range[0]);
    const { sha256, bytes } = await this.zip.finish();
    const sheets: Record<string, number> = {};
    for (const [name, report] of Object.entries(this.tables)) sheets[name] = report.rows;
    const rows = (sheets.payments ?? 0) + (sheets.transfers ?? 0);
    return { path: WORKBOOK_FILE, rows, bytes, sha256, sheets };
  }

  /** The package parts, the sheets in the reader's order: summary, records, rejects, about. */
  private async parts_(created: Date): Promise<void> {
    const rank = (name: string) =>
      name === 'summary'
        ? 0
        : name.startsWith('payments')
          ? 1
          : name.startsWith('transfers')
            ? 2
            : name === 'rejects'
              ? 3
              : 4;
    const shown = [...this.written]
      .sort((a, b) => rank(a.name) - rank(b.name))
      .map((s) => ({
        name: s.name,
        part: s.part,
        table: s.frame.table,
        columns: s.frame.columns.length,
        lastRow: s.lastRow,
      }));
    await this.zip.addEntry('xl/workbook.xml', workbookXml(shown));
    await this.zip.addEntry('xl/_rels/workbook.xml.rels', workbookRelsXml(shown));
    await this.zip.addEntry('xl/styles.xml', stylesXml());
    await this.zip.addEntry('docProps/core.xml', coreXml(created));
    await this.zip.addEntry('docProps/app.xml', appXml());
    await this.zip.addEntry('_rels/.rels', rootRelsXml());
    await this.zip.addEntry('[Content_Types].xml', contentTypesXml(shown));
  }

  /** Stops writing (the export failed or found the day unchanged); the folder is removed by the caller. */
  abort(): void {
    this.zip.abort();
  }
}

interface SmallSheetRows {
  rejects: QueryRows;
  settled: SettledRow[];
}

/** The rejects sheet's rows and the settled subtotals, read on `client` (in the export's snapshot). */
async function readSmallSheetRows(
  client: ClientBase,
  range: [Date, Date],
  { day, zone }: WorkbookOptions,
): Promise<SmallSheetRows> {
  // the same selection as rejects.csv: its counts per stream are summary.csv's quarantined rows
  const rejects = await queryRows(client, REJECTS_SHEET_SQL, [...range, day, zone], REJECTS_COLUMNS, zone);
  const settled = await client.query<SettledRow>(SETTLED_SQL, range);
  return { rejects, settled: settled.rows };
}

/** Streams a records file's COPY through `sink` alone (no CSV), on `client`'s current transaction. */
async function copyInto(
  client: ClientBase,
  sheet: RecordsSheet,
  range: [Date, Date],
  sink: ByteSink,
): Promise<void> {
  const [start, end] = range.map((d) => client.escapeLiteral(d.toISOString())) as [string, string];
  for await (const chunk of client.query(
    copyStreams.to(recordsCopySql(sheet.file, start, end)),
  ) as AsyncIterable<Buffer>) {
    await sink.write(chunk);
  }
  await sink.end();
}

/**
 * The whole workbook on one connection, in `client`'s current transaction (the export writes it beside
 * the CSVs instead: PackWorkbook). For tests and tools.
 */
export async function writePackWorkbook(
  client: ClientBase,
  input: WorkbookOptions & FinishInput & { dir: string },
): Promise<WorkbookFile> {
  const workbook = PackWorkbook.open(input.dir, input);
  try {
    for (const sheet of [PAYMENTS_SHEET, TRANSFERS_SHEET]) {
      await copyInto(client, sheet, input.range, await workbook.recordsSink(client, sheet, input.range));
    }
    return await workbook.finish(client, input);
  } catch (error) {
    workbook.abort();
    throw error;
  }
}
