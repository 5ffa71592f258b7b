/**
 * Writes (or restates) one day's reconciliation pack. What it guarantees:
 * - Everything the pack says is read in one REPEATABLE READ snapshot: the CSVs, the summary, the state and
 *   the restatement diff describe the same instant of the warehouse. (The records files are written on a
 *   second connection that imports the export transaction's snapshot, while the first does the rest.)
 * - Files are written into a hidden temporary folder of the day and only published by renaming that
 *   folder to `vN`, then the day's top manifest is replaced (written last). A killed export leaves at most
 *   a `.tmp-*` folder, which the next export of the day removes; a reader never sees a partial file.
 * - An unchanged day writes nothing new: a day's version changes only when what it says changes (a record
 *   added, removed or updated since the published version's snapshot, its quarantined records or
 *   reconcile differences, its state). The pack's layout (PACK_LAYOUT) is not part of it: after a layout
 *   change, an unchanged day keeps its version, every published byte and its old layout.
 * - Two exports of one day never interleave: an advisory lock per day (pack-lock.ts: transaction-level,
 *   held by a transaction of its own) serialises them.
 * - A day sync does not cover yet is never published as final: it is refused (DayNotCoveredError) unless
 *   the caller allows an `incomplete` pack; a future day is a usage error.
 */
import { mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import pg, { type PoolClient } from 'pg';
import { UsageError } from '../errors.js';
import { pausePoint } from '../pause-point.js';
import type { Runtime } from '../sync/services.js';
import { dayWindow, type Window } from '../sync/windows.js';
import { dayCoverage, DayNotCoveredError, describeGaps, type StreamCoverage } from './coverage.js';
import { neutralise } from './csv-cells.js';
import {
  manifestText,
  PACK_LAYOUT,
  readLatestManifest,
  replaceFileAtomically,
  sameLists,
  topManifest,
  versionDir,
  type Manifest,
  type PackFiles,
  type StreamTotal,
} from './manifest.js';
import {
  OPEN_RECORDS_SQL,
  PAYMENTS_FILE,
  packCsvColumns,
  recordsCopySql,
  SNAPSHOT_DELETE_SQL,
  SNAPSHOT_INSERT_SQL,
  SUMMARY_HEADER,
  SUMMARY_SQL,
  TRANSFERS_FILE,
  type PackFile,
} from './pack-query.js';
import { writeCsvFile, writeSmallCsv, type WrittenFile } from './pack-writer.js';
import { PackWorkbook } from './pack-xlsx.js';
import { PAYMENTS_SHEET, TRANSFERS_SHEET, type RecordsSheet } from './pack-xlsx-query.js';
import { withDayLock } from './pack-lock.js';
import { packState } from './pack-state.js';
import { latestReconcile } from './reconcile-store.js';
import { writeDifferences, writeRejects } from './pack-rejects.js';
import { changedSinceLastVersion, changesSinceSnapshot } from './restatement.js';

export interface ExportResult {
  day: string;
  version: number;
  /** The published version's folder. */
  dir: string;
  restated: boolean;
  unchanged: boolean;
  state: Manifest['state'];
  stateReason: string;
  counts: { payments: number; transfers: number };
  quarantined: { payments: number; transfers: number };
}

export interface ExportOptions {
  /** The clock deciding whether the day is over and the settle horizon has passed (tests: the simulator's). */
  now?: Date;
  /** Publish a day sync does not cover yet, as `incomplete`, instead of refusing it. */
  allowIncomplete?: boolean;
}

/** Removes what a killed export left behind (only ever hidden `.tmp-*` entries). Under the day lock. */
async function removeLeftovers(dayDir: string): Promise<void> {
  for (const name of await readdir(dayDir)) {
    if (name.startsWith('.tmp-')) await rm(join(dayDir, name), { recursive: true, force: true });
  }
}

/**
 * The next version number: above the latest manifest, any version folder on disk, and the ledger. The
 * ledger counts too because EXPORT_DIR may have been moved or emptied while the database kept its
 * versions: a version number is never given twice, even to a different folder.
 */
async function nextVersion(
  client: PoolClient,
  day: string,
  dayDir: string,
  latest: Manifest | null,
): Promise<number> {
  const onDisk = (await readdir(dayDir))
    .map((name) => /^v(\d+)$/.exec(name)?.[1])
    .filter((n): n is string => n !== undefined)
    .map(Number);
  return Math.max(latest?.version ?? 0, await ledgerVersion(client, day), ...onDisk) + 1;
}

/** The day's latest version in the ledger (0: none); the export snapshot is that version's. */
async function ledgerVersion(client: PoolClient, day: string): Promise<number> {
  const { rows } = await client.query<{ version: number | null }>(
    'SELECT max(version) AS version FROM reporting.export_versions WHERE day = $1::date',
    [day],
  );
  return rows[0]?.version ?? 0;
}

/**
 * Whether the day's records are those of the published version `latest`: compared with the export
 * snapshot (restatement.ts), which is the ledger's latest version's, so only when that is `latest` (an
 * EXPORT_DIR restored from elsewhere counts as changed).
 */
async function sameRecords(
  client: PoolClient,
  range: [Date, Date],
  day: string,
  latest: Manifest,
): Promise<boolean> {
  if ((await ledgerVersion(client, day)) !== latest.version) return false;
  return !(await changedSinceLastVersion(client, range, day));
}

type RecordFiles = Record<'payments' | 'transfers', WrittenFile>;

/**
 * The two records files, written by PostgreSQL's COPY on a connection of their own that reads the
 * export's snapshot (`SET TRANSACTION SNAPSHOT`): the same instant as everything else in the pack, while
 * the export's own connection computes the summary, the restatement and the next snapshot at the same
 * time (on two cores, a 200k-payment day's export no longer waits for those 0.3 s after the COPY). The
 * same COPY feeds the workbook's records sheets.
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
): Promise<{ summary: WrittenFile; totals: Manifest['totals'] }> {
  const { rows } = await client.query({ text: SUMMARY_SQL, values: range, rowMode: 'array' });
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

/** The day's state by the one rule (pack-state.ts), from the facts in the export's snapshot. */
async function stateOf(
  client: PoolClient,
  range: [Date, Date],
  job: DayJob,
  reconcile: Manifest['reconcile'],
): Promise<Pick<Manifest, 'state' | 'stateReason'>> {
  const gaps = describeGaps(job.coverage);
  if (gaps) return packState({ day: job.day, gaps, openRecords: 0, horizonPassed: false, reconcile });
  const { rows } = await client.query(OPEN_RECORDS_SQL, range);
  const openRecords = (rows[0].payments as number) + (rows[0].transfers as number);
  const horizonPassed = job.now.getTime() > range[1].getTime() + job.horizonMs;
  return packState({ day: job.day, gaps, openRecords, horizonPassed, reconcile });
}

export async function exportDay(
  runtime: Runtime,
  day: string,
  options: ExportOptions = {},
): Promise<ExportResult> {
  const { settings, pool } = runtime;
  const window = dayWindow(day, settings.REPORT_TIMEZONE);
  const range: [Date, Date] = [window.start, window.end];
  const now = options.now ?? new Date();
  const coverage = await checkCovered(runtime, day, window, now, options.allowIncomplete === true);
  const dayDir = resolve(settings.EXPORT_DIR, day);
  await mkdir(dayDir, { recursive: true });
  return withDayLock(pool, day, async (client) => {
    await removeLeftovers(dayDir);
    const horizonMs = settings.SETTLE_HORIZON;
    return exportLocked(runtime, client, { day, range, dayDir, now, coverage, horizonMs });
  });
}

/**
 * A future day is a usage error; a day sync does not cover yet (today, or a past day with a gap) is
 * refused with what to run, unless `incomplete` packs are allowed. Returns the coverage for the state.
 */
async function checkCovered(
  runtime: Runtime,
  day: string,
  window: Window,
  now: Date,
  allowIncomplete: boolean,
): Promise<StreamCoverage[]> {
  if (window.start.getTime() > now.getTime()) {
    throw new UsageError(
      `--day ${day} is in the future (${runtime.settings.REPORT_TIMEZONE}): there is nothing to export yet`,
    );
  }
  const sources = runtime.settings.sources.map((s) => s.name);
  const coverage = await dayCoverage(runtime.pool, sources, window, runtime.settings.SETTLE_LAG);
  const gaps = describeGaps(coverage);
  if (!gaps || allowIncomplete) return coverage;
  const what =
    window.end.getTime() > now.getTime()
      ? `${day} is not over yet (${gaps} not covered)`
      : `${day} not synced yet: run \`paysync backfill --from ${day} --to ${day}\` (${gaps} not covered)`;
  throw new DayNotCoveredError(`${what}, or publish it marked incomplete with --allow-incomplete`);
}

interface DayJob {
  day: string;
  range: [Date, Date];
  dayDir: string;
  now: Date;
  coverage: StreamCoverage[];
  horizonMs: number;
}

async function exportLocked(runtime: Runtime, client: PoolClient, job: DayJob): Promise<ExportResult> {
  const { day, range, dayDir } = job;
  const temp = await mkdtemp(join(dayDir, '.tmp-'));
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
  let recordFiles: Promise<RecordFiles> | undefined;
  const zone = runtime.settings.REPORT_TIMEZONE;
  const workbook = PackWorkbook.open(temp, { day, zone });
  try {
    const { rows } = await client.query<{ snapshot: string }>('SELECT pg_export_snapshot() AS snapshot');
    recordFiles = writeRecordFiles(runtime.settings.DATABASE_URL, rows[0]!.snapshot, range, temp, workbook);
    recordFiles.catch(() => undefined); // awaited below; meanwhile this connection does the rest
    const rejects = await writeRejects(client, range, day, temp);
    const { summary, totals } = await writeSummary(client, range, temp, rejects.counts);
    const differences = await writeDifferences(client, day, temp);
    const reconcile = await latestReconcile(client, day);
    const state = await stateOf(client, range, job, reconcile);
    const latest = await readLatestManifest(dayDir);
    // compared with the previous version's snapshot before it is replaced; both undone if nothing changed
    const restatement = latest ? await changesSinceSnapshot(client, range, day, latest.version) : null;
    const sameDay = latest !== null && (await sameRecords(client, range, day, latest));
    await replaceSnapshot(client, range, day);
    const files: PackFiles<WrittenFile> = {
      ...(await recordFiles),
      summary,
      rejects: rejects.file,
      ...(differences ? { differences } : {}),
    };
    await pausePoint('export:files-written');
    const counts = { payments: files.payments.rows, transfers: files.transfers.rows };
    const quarantined = rejects.counts;
    // an unchanged day keeps its version (whatever layout it was written in), unless its state moved
    if (latest && sameDay && sameLists(latest, files) && latest.state === state.state) {
      workbook.abort();
      await client.query('ROLLBACK');
      await rm(temp, { recursive: true, force: true });
      // the published files stand; the top manifest follows the latest reconcile and the state's reason
      if (latest.reconcile?.checkedAt !== reconcile?.checkedAt || latest.stateReason !== state.stateReason) {
        const refreshed = { ...latest, reconcile, stateReason: state.stateReason };
        await replaceFileAtomically(join(dayDir, 'manifest.json'), manifestText(refreshed));
      }
      const dir = join(dayDir, versionDir(latest.version));
      return {
        day,
        version: latest.version,
        dir,
        restated: false,
        unchanged: true,
        ...state,
        counts,
        quarantined,
      };
    }
    const version = await nextVersion(client, day, dayDir, latest);
    const manifest: Manifest = {
      day,
      timeZone: zone,
      version,
      layout: PACK_LAYOUT,
      generatedAt: new Date().toISOString(),
      ...state,
      files: manifestFiles(files),
      totals,
      quarantined,
      reconcile,
      restatement,
    };
    // the workbook shows the manifest's facts, so it ends after them (same snapshot, same connection)
    manifest.files.xlsx = await workbook.finish(client, { range, manifest });
    await replaceFileAtomically(join(temp, 'manifest.json'), manifestText(manifest));
    await pausePoint('export:before-publish');
    const dir = join(dayDir, versionDir(version));
    await rename(temp, dir);
    await pausePoint('export:after-rename');
    await recordVersion(client, manifest);
    await client.query('COMMIT');
    await replaceFileAtomically(join(dayDir, 'manifest.json'), manifestText(topManifest(manifest)));
    const restated = latest !== null;
    return { day, version, dir, restated, unchanged: false, ...state, counts, quarantined };
  } catch (error) {
    await recordFiles?.catch(() => undefined); // never leave the other connection writing behind us
    workbook.abort();
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** The manifest's file entries: each written file with its path in the version folder. */
function manifestFiles(files: PackFiles<WrittenFile>): Manifest['files'] {
  const entry = (name: string, f: WrittenFile) => ({ path: `${name}.csv`, ...f });
  return {
    payments: entry('payments', files.payments),
    transfers: entry('transfers', files.transfers),
    summary: entry('summary', files.summary),
    rejects: entry('rejects', files.rejects),
    ...(files.differences ? { differences: entry('differences', files.differences) } : {}),
  };
}

/** The snapshot the next restatement is compared with: the day's records as this version has them. */
async function replaceSnapshot(client: PoolClient, range: [Date, Date], day: string): Promise<void> {
  await client.query(SNAPSHOT_DELETE_SQL, [day]);
  await client.query(SNAPSHOT_INSERT_SQL, [...range, day]);
}

/** The version's ledger row. */
async function recordVersion(client: PoolClient, m: Manifest): Promise<void> {
  await client.query(
    `INSERT INTO reporting.export_versions
       (day, version, time_zone, generated_at, final, state, payments, transfers, manifest)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      m.day,
      m.version,
      m.timeZone,
      m.generatedAt,
      m.state === 'final',
      m.state,
      m.files.payments.rows,
      m.files.transfers.rows,
      m,
    ],
  );
}
