/**
 * Writes (or restates) one day's reconciliation pack. What it guarantees:
 * - Everything the pack says is read in one REPEATABLE READ snapshot: the CSVs, the summary, the state and
 *   the restatement diff describe the same instant of the warehouse. (The records files are written on a
 *   second connection that imports the export transaction's snapshot, while the first does the rest.)
 * - Files are written into a hidden temporary folder of the day and only published by renaming that
 *   folder to `vN`, then the day's top manifest is replaced (written last). A killed export leaves at most
 *   a `.tmp-*` folder, which the next export of the day removes; a reader never sees a partial file.
 * - An unchanged day writes nothing new: the fresh files are compared (SHA-256) with the published ones
 *   and thrown away when equal, so the version and every published byte stay the same.
 * - Two exports of one day never interleave: a session advisory lock per day serialises them.
 */
import { mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import pg, { type PoolClient } from 'pg';
import { pausePoint } from '../pause-point.js';
import type { Runtime } from '../runtime.js';
import { dayWindow } from '../sync/windows.js';
import { neutralise } from './csv-cells.js';
import {
  manifestText,
  readLatestManifest,
  replaceFileAtomically,
  sameContent,
  topManifest,
  versionDir,
  type Manifest,
  type PackFileName,
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
import { writePackWorkbook } from './pack-xlsx.js';
import { withDayLock } from './pack-lock.js';
import { latestReconcile } from './reconcile-store.js';
import { changesSinceSnapshot } from './restatement.js';

export interface ExportResult {
  day: string;
  version: number;
  /** The published version's folder. */
  dir: string;
  restated: boolean;
  unchanged: boolean;
  state: Manifest['state'];
  counts: { payments: number; transfers: number };
}

export interface ExportOptions {
  /** The clock deciding whether the settle horizon has passed (tests follow the simulator's). */
  now?: Date;
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
  const { rows } = await client.query<{ version: number | null }>(
    'SELECT max(version) AS version FROM reporting.export_versions WHERE day = $1::date',
    [day],
  );
  return Math.max(latest?.version ?? 0, rows[0]?.version ?? 0, ...onDisk) + 1;
}

type RecordFiles = Record<Exclude<PackFileName, 'summary'>, WrittenFile>;

/**
 * The two records files, written by PostgreSQL's COPY on a connection of their own that reads the
 * export's snapshot (`SET TRANSACTION SNAPSHOT`): the same instant as everything else in the pack, while
 * the export's own connection computes the summary, the restatement and the next snapshot at the same
 * time (on two cores, a 200k-payment day's export no longer waits for those 0.3 s after the COPY).
 */
async function writeRecordFiles(
  databaseUrl: string,
  snapshot: string,
  range: [Date, Date],
  dir: string,
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
    const csv = (file: PackFile) =>
      writeCsvFile(
        client,
        { sql: recordsCopySql(file, start, end), columns: packCsvColumns(file) },
        join(dir, `${file.name}.csv`),
      );
    const payments = await csv(PAYMENTS_FILE);
    const transfers = await csv(TRANSFERS_FILE);
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
): Promise<{ summary: WrittenFile; totals: Manifest['totals'] }> {
  const { rows } = await client.query({ text: SUMMARY_SQL, values: range, rowMode: 'array' });
  const cells = (rows as unknown[][]).map((r) => r.map((v) => (typeof v === 'string' ? neutralise(v) : v)));
  const summary = await writeSmallCsv(cells, SUMMARY_HEADER, join(dir, 'summary.csv'));
  const total = (stream: string): StreamTotal => {
    const row = (rows as unknown[][]).find((r) => r[0] === 'stream_total' && r[1] === stream);
    return { records: (row?.[5] as number) ?? 0, amount: (row?.[6] as string) ?? '0' };
  };
  return { summary, totals: { payments: total('payments'), transfers: total('transfers') } };
}

async function stateOf(
  client: PoolClient,
  range: [Date, Date],
  horizonMs: number,
  now: Date,
): Promise<Pick<Manifest, 'state' | 'stateReason'>> {
  const { rows } = await client.query(OPEN_RECORDS_SQL, range);
  const open = (rows[0].payments as number) + (rows[0].transfers as number);
  if (open === 0) return { state: 'final', stateReason: 'every record is in a final state' };
  if (now.getTime() > range[1].getTime() + horizonMs) {
    return { state: 'final', stateReason: `the settle horizon passed with ${open} record(s) not final` };
  }
  return { state: 'provisional', stateReason: `${open} record(s) not yet in a final state` };
}

export async function exportDay(
  runtime: Runtime,
  day: string,
  options: ExportOptions = {},
): Promise<ExportResult> {
  const { settings, pool } = runtime;
  const window = dayWindow(day, settings.REPORT_TIMEZONE);
  const range: [Date, Date] = [window.start, window.end];
  const dayDir = resolve(settings.EXPORT_DIR, day);
  await mkdir(dayDir, { recursive: true });
  return withDayLock(pool, day, async (client) => {
    await removeLeftovers(dayDir);
    return exportLocked(runtime, client, { day, range, dayDir, now: options.now ?? new Date() });
  });
}

interface DayJob {
  day: string;
  range: [Date, Date];
  dayDir: string;
  now: Date;
}

async function exportLocked(runtime: Runtime, client: PoolClient, job: DayJob): Promise<ExportResult> {
  const { day, range, dayDir, now } = job;
  const temp = await mkdtemp(join(dayDir, '.tmp-'));
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
  let recordFiles: Promise<RecordFiles> | undefined;
  try {
    const { rows } = await client.query<{ snapshot: string }>('SELECT pg_export_snapshot() AS snapshot');
    recordFiles = writeRecordFiles(runtime.settings.DATABASE_URL, rows[0]!.snapshot, range, temp);
    recordFiles.catch(() => undefined); // awaited below; meanwhile this connection does the rest
    const { summary, totals } = await writeSummary(client, range, temp);
    const latest = await readLatestManifest(dayDir);
    // compared with the previous version's snapshot before it is replaced; both undone if nothing changed
    const restatement = latest ? await changesSinceSnapshot(client, range, day, latest.version) : null;
    await replaceSnapshot(client, range, day);
    const files = { ...(await recordFiles), summary };
    await pausePoint('export:files-written');
    const counts = { payments: files.payments.rows, transfers: files.transfers.rows };
    if (latest && sameContent(latest, files)) {
      await client.query('ROLLBACK');
      await rm(temp, { recursive: true, force: true });
      const dir = join(dayDir, versionDir(latest.version));
      return {
        day,
        version: latest.version,
        dir,
        restated: false,
        unchanged: true,
        state: latest.state,
        counts,
      };
    }
    const version = await nextVersion(client, day, dayDir, latest);
    const manifest: Manifest = {
      day,
      timeZone: runtime.settings.REPORT_TIMEZONE,
      version,
      generatedAt: new Date().toISOString(),
      ...(await stateOf(client, range, runtime.settings.SETTLE_HORIZON, now)),
      files: {
        payments: { path: 'payments.csv', ...files.payments },
        transfers: { path: 'transfers.csv', ...files.transfers },
        summary: { path: 'summary.csv', ...files.summary },
      },
      totals,
      reconcile: await latestReconcile(client, day),
      restatement,
    };
    // the workbook shows the manifest's facts, so it comes after them (same snapshot, same connection)
    manifest.files.xlsx = await writePackWorkbook(client, {
      range,
      zone: manifest.timeZone,
      dir: temp,
      manifest,
    });
    await replaceFileAtomically(join(temp, 'manifest.json'), manifestText(manifest));
    await pausePoint('export:before-publish');
    const dir = join(dayDir, versionDir(version));
    await rename(temp, dir);
    await pausePoint('export:after-rename');
    await recordVersion(client, manifest);
    await client.query('COMMIT');
    await replaceFileAtomically(join(dayDir, 'manifest.json'), manifestText(topManifest(manifest)));
    const restated = latest !== null;
    return { day, version, dir, restated, unchanged: false, state: manifest.state, counts };
  } catch (error) {
    await recordFiles?.catch(() => undefined); // never leave the other connection writing behind us
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
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
       (day, version, time_zone, generated_at, final, payments, transfers, manifest)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      m.day,
      m.version,
      m.timeZone,
      m.generatedAt,
      m.state === 'final',
      m.files.payments.rows,
      m.files.transfers.rows,
      m,
    ],
  );
}
