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
 * - It trusts nothing on disk (pack-disk.ts): the day folder must be a real folder inside EXPORT_DIR, the
 *   manifests must be paysync's, and the latest version's files must still match their manifest (and the
 *   manifest the ledger recorded) before anything is compared with them; otherwise it stops (exit 1),
 *   naming each file, rather than call a changed pack "unchanged".
 * - Folders and files are created as the process's umask allows (finance often reads them from another
 *   account).
 * - A day finance signed off whose records change gets a version that says so (restatedAfterSignoff:
 *   which version was signed, by whom, what changed since); the top manifest carries the day's sign-off
 *   state now.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { PoolClient } from 'pg';
import { UsageError } from '../errors.js';
import { pausePoint } from '../pause-point.js';
import type { Runtime } from '../sync/services.js';
import { dayWindow, type Window } from '../sync/windows.js';
import { dayCoverage, DayNotCoveredError, describeGaps, type StreamCoverage } from './coverage.js';
import {
  manifestText,
  MAX_VERSION,
  PACK_LAYOUT,
  replaceFileAtomically,
  sameLists,
  topManifest,
  VERSION_CURRENT,
  versionDir,
  type Manifest,
} from './manifest.js';
import { ManifestError } from './manifest-schema.js';
import { derivePack, type DayJob, type DerivedPack } from './pack-derive.js';
import { checkVersionOnDisk } from './pack-check.js';
import {
  dayFolder,
  PackDiskError,
  readLatestManifest,
  readVersionManifest,
  versionsOnDisk,
} from './pack-disk.js';
import { withDayLock } from './pack-lock.js';
import { SNAPSHOT_DELETE_SQL, SNAPSHOT_INSERT_SQL } from './pack-query.js';
import { changedSinceLastVersion, restatementFromFiles, restatementFromSnapshot } from './restatement.js';
import { restatedAfterSignoff } from './signoff-restated.js';
import { manifestSignoff } from './signoff-state.js';
import { signoffStateOfDay } from './signoff-store.js';

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
  /** The version signed off before this restatement changed the day's records (null: none). */
  signedBefore: number | null;
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

/** A hidden folder for the pack being written: created as the umask allows (mkdtemp would make it 0700). */
async function tempFolder(dayDir: string): Promise<string> {
  const dir = join(dayDir, `.tmp-${randomBytes(8).toString('hex')}`);
  await mkdir(dir);
  return dir;
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
  const { rows } = await client.query<{ version: number | null }>(
    'SELECT max(version) AS version FROM reporting.export_versions WHERE day = $1::date',
    [day],
  );
  const highest = Math.max(latest?.version ?? 0, rows[0]?.version ?? 0, ...(await versionsOnDisk(dayDir)));
  if (highest >= MAX_VERSION) {
    throw new PackDiskError(
      `${dayDir} already holds version ${highest}, the largest a pack can have: move the day folder out of EXPORT_DIR to publish the day afresh`,
    );
  }
  return highest + 1;
}

/**
 * Whether the day's records are those of the published version `latest`: compared with the export
 * snapshot (restatement.ts), which is the ledger's latest version's, so only when that is `latest` (an
 * EXPORT_DIR restored from elsewhere counts as changed).
 */
async function sameRecords(client: PoolClient, job: DayJob, latest: Manifest): Promise<boolean> {
  const { rows } = await client.query<{ version: number | null }>(
    'SELECT max(version) AS version FROM reporting.export_versions WHERE day = $1::date',
    [job.day],
  );
  if ((rows[0]?.version ?? 0) !== latest.version) return false;
  return !(await changedSinceLastVersion(client, job.range, job.day));
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
  const dayDir = (await dayFolder(settings.EXPORT_DIR, day, true)) as string;
  return withDayLock(pool, day, async (client) => {
    await removeLeftovers(dayDir);
    const job: DayJob = { day, range, now, coverage, horizonMs: settings.SETTLE_HORIZON };
    return exportLocked(runtime, client, job, dayDir);
  });
}

/**
 * A future day is a usage error; a day sync does not cover yet (today, or a past day with a gap) is
 * refused with what to run, unless `incomplete` packs are allowed. Returns the coverage for the state.
 */
export async function checkCovered(
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

/** What is published of the day: its latest version's own manifest and the top one, checked on disk. */
export interface Published {
  /** The latest version's own manifest (vN/manifest.json). */
  own: Manifest;
  ownSha256: string;
  /** The day's top manifest.json. */
  top: Manifest;
}

/**
 * The day's latest published version, after checking that the top manifest names a version whose own
 * manifest and files are on disk as published (and as the ledger recorded the manifest). Null when the
 * day has never been exported. Anything else: PackDiskError or ManifestError, naming every file.
 */
export async function readPublished(
  client: PoolClient,
  day: string,
  dayDir: string,
): Promise<Published | null> {
  const top = await readLatestManifest(dayDir);
  if (!top) return null;
  if (top.manifest.day !== day)
    throw new ManifestError(top.path, `is the manifest of ${top.manifest.day}, not of ${day}`);
  const own = await readVersionManifest(dayDir, top.manifest.version);
  if (!own) {
    throw new PackDiskError(
      `${top.path} names version ${top.manifest.version}, whose ${versionDir(top.manifest.version)}/manifest.json is missing: restore it, or move the day folder out of EXPORT_DIR to publish the day afresh`,
    );
  }
  const problems = await checkVersionOnDisk(client, dayDir, own, top.manifest);
  if (problems.length > 0) {
    throw new PackDiskError(
      `the published pack of ${day} no longer matches its manifest: ${problems.join('; ')}. ` +
        `\`paysync verify --day ${day} --all-versions\` lists every difference; restore the files (or move the day folder out of EXPORT_DIR to publish the day afresh)`,
    );
  }
  return { own: own.manifest, ownSha256: own.sha256, top: top.manifest };
}

async function exportLocked(
  runtime: Runtime,
  client: PoolClient,
  job: DayJob,
  dayDir: string,
): Promise<ExportResult> {
  const { day } = job;
  const published = await readPublished(client, day, dayDir);
  const latest = published?.own ?? null;
  const temp = await tempFolder(dayDir);
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
  let derived: DerivedPack | undefined;
  try {
    // compared with the previous version before its snapshot is replaced; both undone if nothing changed.
    // From the snapshot, while the records files are written; from the files, once they are.
    let bySnapshot: Promise<Compared | null> = Promise.resolve(null);
    derived = await derivePack(runtime, client, job, temp, () => {
      bySnapshot = compareBySnapshot(client, job, published);
      return bySnapshot;
    });
    const { restatement, sameDay } =
      (await bySnapshot) ?? (await compareByFiles(client, job, dayDir, published as Published, temp));
    await pausePoint('export:files-written');
    const counts = { payments: derived.files.payments.rows, transfers: derived.files.transfers.rows };
    const facts = { day, counts, quarantined: derived.quarantined, ...derived.state };
    // an unchanged day keeps its version (whatever layout it was written in), unless its state moved
    if (
      published &&
      latest &&
      sameDay &&
      sameLists(latest, derived.files) &&
      latest.state === derived.state.state
    ) {
      derived.workbook.abort();
      await client.query('ROLLBACK');
      await rm(temp, { recursive: true, force: true });
      await refreshTop(client, dayDir, published, derived);
      const dir = join(dayDir, versionDir(latest.version));
      return { ...facts, version: latest.version, dir, restated: false, unchanged: true, signedBefore: null };
    }
    const version = await nextVersion(client, day, dayDir, latest);
    const manifest = await newManifest(runtime, client, job, { dayDir, temp, version, derived, restatement });
    const text = manifestText(manifest);
    await replaceFileAtomically(join(temp, 'manifest.json'), text);
    await pausePoint('export:before-publish');
    const dir = join(dayDir, versionDir(version));
    await rename(temp, dir);
    await pausePoint('export:after-rename');
    await recordVersion(client, manifest, createHash('sha256').update(text).digest('hex'));
    await client.query('COMMIT');
    await writeTop(client, dayDir, manifest);
    const signedBefore = manifest.restatedAfterSignoff?.signed.version ?? null;
    return { ...facts, version, dir, restated: latest !== null, unchanged: false, signedBefore };
  } catch (error) {
    derived?.workbook.abort();
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** What the day says against its published version (none: a first version). */
interface Compared {
  restatement: Manifest['restatement'];
  /** The day's records are the published version's. */
  sameDay: boolean;
}

/**
 * Compares the day with its published version's snapshot, then replaces the snapshot with the day's
 * records now (both in the export's transaction). Null, with nothing replaced, when the snapshot is not
 * the published version's: the version's files decide then (compareByFiles).
 */
async function compareBySnapshot(
  client: PoolClient,
  job: DayJob,
  published: Published | null,
): Promise<Compared | null> {
  const restatement = published ? await restatementFromSnapshot(client, job, published) : null;
  if (published && !restatement) return null;
  const sameDay = published !== null && (await sameRecords(client, job, published.own));
  await replaceSnapshot(client, job.range, job.day);
  return { restatement, sameDay };
}

/** Compares the day with its published version's files (the new version's written), then replaces the snapshot. */
async function compareByFiles(
  client: PoolClient,
  job: DayJob,
  dayDir: string,
  published: Published,
  temp: string,
): Promise<Compared> {
  const restatement = await restatementFromFiles(dayDir, published, temp);
  const sameDay = await sameRecords(client, job, published.own);
  await replaceSnapshot(client, job.range, job.day);
  return { restatement, sameDay };
}

interface NewVersion {
  dayDir: string;
  temp: string;
  version: number;
  derived: DerivedPack;
  restatement: Manifest['restatement'];
}

/** The new version's manifest, its workbook written into the temporary folder. */
async function newManifest(
  runtime: Runtime,
  client: PoolClient,
  job: DayJob,
  v: NewVersion,
): Promise<Manifest> {
  const { derived } = v;
  const manifest: Manifest = {
    day: job.day,
    timeZone: runtime.settings.REPORT_TIMEZONE,
    version: v.version,
    layout: PACK_LAYOUT,
    generatedAt: new Date().toISOString(),
    ...derived.state,
    files: manifestFiles(derived.files),
    totals: derived.totals,
    quarantined: derived.quarantined,
    digests: derived.digests,
    emptyConfirmed: derived.emptyConfirmed,
    ...(derived.blocked.length > 0 ? { blocked: derived.blocked } : {}),
    reconcile: derived.reconcile,
    restatement: v.restatement,
    restatedAfterSignoff: await restatedAfterSignoff(client, job.day, v.dayDir, derived.digests, v.temp),
    current: VERSION_CURRENT,
  };
  // the workbook shows the manifest's facts, so it ends after them (same snapshot, same connection)
  manifest.files.xlsx = await derived.workbook.finish(client, { range: job.range, manifest });
  return manifest;
}

/** The day's top manifest: the version's, with file paths from the day folder and the sign-off state now. */
async function writeTop(client: PoolClient, dayDir: string, manifest: Manifest): Promise<void> {
  const state = await signoffStateOfDay(client, manifest.day);
  const top = topManifest(manifest, state ? manifestSignoff(state) : undefined);
  await replaceFileAtomically(join(dayDir, 'manifest.json'), manifestText(top));
}

/** An unchanged day: the published files stand; the top manifest follows the latest reconcile, state reason and sign-off. */
async function refreshTop(
  client: PoolClient,
  dayDir: string,
  p: Published,
  derived: DerivedPack,
): Promise<void> {
  const state = await signoffStateOfDay(client, p.own.day);
  const { blocked: _published, ...own } = p.own;
  const now = derived.blocked.length > 0 ? { blocked: derived.blocked } : {};
  const fresh = topManifest(
    { ...own, ...now, reconcile: derived.reconcile, stateReason: derived.state.stateReason },
    state ? manifestSignoff(state) : undefined,
  );
  if (manifestText(fresh) !== manifestText(p.top))
    await replaceFileAtomically(join(dayDir, 'manifest.json'), manifestText(fresh));
}

/** The manifest's file entries: each written file with its path in the version folder. */
function manifestFiles(files: DerivedPack['files']): Manifest['files'] {
  const entry = (name: string, f: DerivedPack['files']['payments']) => ({ path: `${name}.csv`, ...f });
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

/** The version's ledger row, with the SHA-256 of its manifest.json as published. */
async function recordVersion(client: PoolClient, m: Manifest, manifestSha256: string): Promise<void> {
  await client.query(
    `INSERT INTO reporting.export_versions
       (day, version, time_zone, generated_at, final, state, payments, transfers, manifest, manifest_sha256)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
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
      manifestSha256,
    ],
  );
}
