/**
 * A day's pack derived from the warehouse: the CSV files, the totals, the quarantined counts, the records
 * digests, the state and its evidence, all read in the caller's REPEATABLE READ transaction (one
 * snapshot). The one derivation of the pack: `export` publishes what it derives, `verify` derives again
 * and compares with what was published. Writes files into `dir` and nothing into the database; the
 * workbook is left open for the caller to finish with the manifest (its about sheet shows it).
 */
import { join } from 'node:path';
import pg, { type PoolClient } from 'pg';
import type { Runtime } from '../sync/services.js';
import { describeGaps, type StreamCoverage } from './coverage.js';
import { neutralise } from './csv-cells.js';
import { checkEmptyDay } from './empty-days.js';
import type {
  BlockedFacts,
  EmptyEvidence,
  Manifest,
  PackFiles,
  RecordsDigests,
  StreamTotal,
} from './manifest.js';
import { blockedDays, manifestBlocked } from '../ops/blocked-days.js';
import {
  OPEN_RECORDS_SQL,
  PAYMENTS_FILE,
  packCsvColumns,
  recordsCopySql,
  SUMMARY_HEADER,
  SUMMARY_SQL,
  TRANSFERS_FILE,
  type PackFile,
} from './pack-query.js';
import { writeDifferences, writeRejects } from './pack-rejects.js';
import { packState } from './pack-state.js';
import { writeCsvFile, writeSmallCsv, type WrittenFile } from './pack-writer.js';
import { PackWorkbook } from './pack-xlsx.js';
import { PAYMENTS_SHEET, TRANSFERS_SHEET, type RecordsSheet } from './pack-xlsx-query.js';
import { recordsDigests } from './records-digest.js';
import { latestReconcile } from './reconcile-store.js';

/** The day being packed. */
export interface DayJob {
  day: string;
  /** The day's instant range [start, end) in REPORT_TIMEZONE. */
  range: [Date, Date];
  /** The clock deciding whether the settle horizon has passed. */
  now: Date;
  coverage: StreamCoverage[];
  horizonMs: number;
}

export interface DerivedPack {
  files: PackFiles<WrittenFile>;
  totals: Manifest['totals'];
  quarantined: Manifest['quarantined'];
  reconcile: Manifest['reconcile'];
  state: Pick<Manifest, 'state' | 'stateReason'>;
  digests: RecordsDigests;
  emptyConfirmed: EmptyEvidence[];
  /** The day's blocked sources and streams with their reasons (empty: not blocked). */
  blocked: BlockedFacts[];
  /** pack.xlsx, its records sheets written from the same COPY as the CSVs; the caller finishes or aborts it. */
  workbook: PackWorkbook;
}

type RecordFiles = Record<'payments' | 'transfers', WrittenFile>;

/**
 * Run on each of the pack's connections inside its transaction: no parallel workers for the pack's
 * queries. Each reads one day; the workers PostgreSQL would start for the digests and the amount look
 * cost more CPU than they save and take cores from the export's own main thread, through which every
 * byte of the records files passes (docs/benchmarks.md, export), and from the sync on a shared host.
 * SET LOCAL: the connection is back to its own settings when the transaction ends (and it works through
 * PgBouncer's transaction pooling).
 */
const NO_PARALLEL_WORKERS_SQL = 'SET LOCAL max_parallel_workers_per_gather = 0';

/**
 * The two records files, written by PostgreSQL's COPY on a connection of their own that reads the
 * caller's snapshot (`SET TRANSACTION SNAPSHOT`): the same instant as everything else in the pack, while
 * the caller's connection computes the rest at the same time (on two cores, a 200k-payment day's export
 * does not wait for the summary and the digests after the COPY). The same COPY feeds the workbook's
 * records sheets.
 */
async function writeRecordFiles(
  databaseUrl: string,
  snapshot: string,
  range: [Date, Date],
  dir: string,
  workbook: PackWorkbook,
): Promise<RecordFiles> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'paysync export' });
  await client.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    await client.query(`SET TRANSACTION SNAPSHOT ${client.escapeLiteral(snapshot)}`);
    await client.query(NO_PARALLEL_WORKERS_SQL);
    const [start, end] = range.map((instant) => client.escapeLiteral(instant.toISOString())) as [
      string,
      string,
    ];
    const csv = async (file: PackFile, sheet: RecordsSheet) =>
      writeCsvFile(
        client,
        { sql: recordsCopySql(file, start, end), columns: packCsvColumns(file) },
        join(dir, `${file.name}.csv`),
        await workbook.recordsSink(client, sheet, range),
      );
    const payments = await csv(PAYMENTS_FILE, PAYMENTS_SHEET);
    const transfers = await csv(TRANSFERS_FILE, TRANSFERS_SHEET);
    await client.query('COMMIT');
    return { payments, transfers };
  } finally {
    await client.end();
  }
}

/** summary.csv and the stream totals the manifest quotes, from the same query. */
async function writeSummary(
  client: PoolClient,
  range: [Date, Date],
  dir: string,
  quarantined: Manifest['quarantined'],
  workbook: PackWorkbook,
): Promise<{ summary: WrittenFile; totals: Manifest['totals'] }> {
  const { rows } = await client.query({ text: SUMMARY_SQL, values: range, rowMode: 'array' });
  workbook.useSummaryRows(rows as unknown[][]); // its summary sheet shows the same rows, not read again
  const cells = (rows as unknown[][]).map((r) => r.map((v) => (typeof v === 'string' ? neutralise(v) : v)));
  // the day's quarantined records (rejects.csv), one line per stream: counted, never summed (no exact amount)
  for (const stream of ['payments', 'transfers'] as const) {
    cells.push(['quarantined', stream, '', '', '', quarantined[stream], '']);
  }
  const summary = await writeSmallCsv(cells, SUMMARY_HEADER, join(dir, 'summary.csv'));
  const total = (stream: string): StreamTotal => {
    const row = (rows as unknown[][]).find((r) => r[0] === 'stream_total' && r[1] === stream);
    return { records: (row?.[5] as number) ?? 0, amount: (row?.[6] as string) ?? '0' };
  };
  return { summary, totals: { payments: total('payments'), transfers: total('transfers') } };
}

/** The state's reason, saying that the day is blocked and why (the codes of docs/operations.md). */
function withBlocked(reason: string, blocked: readonly BlockedFacts[]): string {
  const codes = [...new Set(blocked.flatMap((b) => b.reasons.map((r) => r.code)))].join(', ');
  const runs = Math.max(...blocked.map((b) => b.failures));
  return `${reason}; blocked: its windows failed ${runs} runs in a row (${codes}), see \`blocked\``;
}

/** The day's state by the one rule (pack-state.ts), worded for a version's own files. */
async function stateOf(
  runtime: Runtime,
  client: PoolClient,
  job: DayJob,
  reconcile: Manifest['reconcile'],
): Promise<{ state: DerivedPack['state']; emptyConfirmed: EmptyEvidence[] }> {
  const base = { day: job.day, reconcile, wording: 'written' as const };
  const gaps = describeGaps(job.coverage);
  if (gaps)
    return { state: packState({ ...base, gaps, openRecords: 0, horizonPassed: false }), emptyConfirmed: [] };
  const { rows } = await client.query(OPEN_RECORDS_SQL, job.range);
  const openRecords = (rows[0].payments as number) + (rows[0].transfers as number);
  const horizonPassed = job.now.getTime() > job.range[1].getTime() + job.horizonMs;
  const { settings } = runtime;
  const empty = await checkEmptyDay(
    client,
    {
      sources: settings.sources.map((s) => s.name),
      zone: settings.REPORT_TIMEZONE,
      settleLagMs: settings.SETTLE_LAG,
    },
    job.day,
  );
  const state = packState({ ...base, gaps, openRecords, horizonPassed, emptyUnconfirmed: empty.unconfirmed });
  return { state, emptyConfirmed: empty.confirmed };
}

/**
 * Derives the day's pack into `dir`. `client` is in a REPEATABLE READ transaction (the caller's: export
 * commits what it records there, verify rolls back). `alongside`, if given, is the caller's own work on
 * `client`, run after the derivation's queries while the records files are still being written (their
 * COPY is on another connection); it is awaited before this returns.
 */
export async function derivePack(
  runtime: Runtime,
  client: PoolClient,
  job: DayJob,
  dir: string,
  alongside?: () => Promise<unknown>,
): Promise<DerivedPack> {
  const { range, day } = job;
  await client.query(NO_PARALLEL_WORKERS_SQL);
  const workbook = PackWorkbook.open(dir, { day, zone: runtime.settings.REPORT_TIMEZONE });
  const { rows } = await client.query<{ snapshot: string }>('SELECT pg_export_snapshot() AS snapshot');
  const recordFiles = writeRecordFiles(
    runtime.settings.DATABASE_URL,
    rows[0]!.snapshot,
    range,
    dir,
    workbook,
  );
  recordFiles.catch(() => undefined); // awaited below; meanwhile this connection does the rest
  try {
    const rejects = await writeRejects(client, range, day, dir);
    const { summary, totals } = await writeSummary(client, range, dir, rejects.counts, workbook);
    const differences = await writeDifferences(client, day, dir);
    const reconcile = await latestReconcile(client, day);
    const { state: stateNow, emptyConfirmed } = await stateOf(runtime, client, job, reconcile);
    const blocked = (
      await blockedDays(client, runtime.settings.REPORT_TIMEZONE, runtime.settings.BLOCKED_AFTER, day)
    ).map(manifestBlocked);
    const state =
      blocked.length === 0
        ? stateNow
        : { ...stateNow, stateReason: withBlocked(stateNow.stateReason, blocked) };
    const digests = await recordsDigests(client, range);
    await workbook.readSmallSheets(client, range);
    await alongside?.();
    const files: PackFiles<WrittenFile> = {
      ...(await recordFiles),
      summary,
      rejects: rejects.file,
      ...(differences ? { differences } : {}),
    };
    const quarantined = rejects.counts;
    return { files, totals, quarantined, reconcile, state, digests, emptyConfirmed, blocked, workbook };
  } catch (error) {
    await recordFiles.catch(() => undefined); // never leave the other connection writing behind us
    workbook.abort();
    throw error;
  }
}
