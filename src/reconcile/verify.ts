/**
 * `paysync verify --day D [--all-versions]`: does the day's latest pack still prove what it says? Three
 * checks, every difference named:
 * 1. on disk: the top manifest and the version's own manifest parse and are paysync's, the version's own
 *    manifest is the one the ledger recorded, each file it lists is there with its size and SHA-256, and
 *    the top manifest agrees with it and with the sign-off ledger;
 * 2. against the warehouse: the pack derived again now, by the export's own derivation (pack-derive.ts)
 *    in one snapshot, gives the same files, digests and state; where a records file differs, each record
 *    is named by id with the pack's values and the warehouse's;
 * 3. with --all-versions, every earlier version's files against its own manifest and the ledger.
 * Reads only: the derivation goes to a temporary folder outside EXPORT_DIR, the transaction rolls back.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PoolClient } from 'pg';
import type { Runtime } from '../sync/services.js';
import { dayWindow } from '../sync/windows.js';
import { dayCoverage } from './coverage.js';
import { COMPARED_FILES, PACK_LAYOUT, versionDir, type Manifest } from './manifest.js';

const ALL_CSV = ['payments', 'transfers', 'summary', 'rejects', 'differences'] as const;
import { derivePack, type DerivedPack } from './pack-derive.js';
import { checkVersionOnDisk } from './pack-check.js';
import {
  dayFolder,
  readLatestManifest,
  readVersionManifest,
  versionsOnDisk,
  type ReadManifest,
} from './pack-disk.js';
import { ledgerVersion, signoffStateOfDay } from './signoff-store.js';
import { recordDifferences } from './verify-records.js';

export interface VerifyReport {
  day: string;
  /** The latest version, or null when there is none to speak of. */
  version: number | null;
  state: Manifest['state'] | null;
  differences: string[];
}

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** The top manifest and the latest version's own, or the difference that stops the check. */
async function readPack(
  dayDir: string | null,
  where: string,
): Promise<{ top: ReadManifest; own: ReadManifest } | string> {
  if (!dayDir) return `${where}: no such folder: the day has no pack`;
  try {
    const top = await readLatestManifest(dayDir);
    if (!top) return `${join(dayDir, 'manifest.json')}: missing`;
    const own = await readVersionManifest(dayDir, top.manifest.version);
    if (!own) return `${join(dayDir, versionDir(top.manifest.version), 'manifest.json')}: missing`;
    return { top, own };
  } catch (error) {
    return describe(error);
  }
}

export async function verifyDay(
  runtime: Runtime,
  day: string,
  options: { allVersions?: boolean; now?: Date } = {},
): Promise<VerifyReport> {
  const where = join(runtime.settings.EXPORT_DIR, day);
  let dayDir: string | null;
  try {
    dayDir = await dayFolder(runtime.settings.EXPORT_DIR, day, false);
  } catch (error) {
    return { day, version: null, state: null, differences: [describe(error)] };
  }
  const pack = await readPack(dayDir, where);
  const differences: string[] = [];
  if (typeof pack === 'string') differences.push(pack);
  else if (dayDir) {
    differences.push(...(await onDisk(runtime, dayDir, pack)));
    differences.push(...(await againstWarehouse(runtime, dayDir, pack.own.manifest, options.now)));
  }
  if (options.allVersions && dayDir) differences.push(...(await earlierVersions(runtime, dayDir, pack)));
  const own = typeof pack === 'string' ? null : pack.own.manifest;
  return { day, version: own?.version ?? null, state: own?.state ?? null, differences };
}

async function onDisk(
  runtime: Runtime,
  dayDir: string,
  pack: { top: ReadManifest; own: ReadManifest },
): Promise<string[]> {
  const { own, top } = pack;
  const out = await checkVersionOnDisk(runtime.pool, dayDir, own, top.manifest);
  const ledger = await ledgerVersion(runtime.pool, own.manifest.day, own.manifest.version);
  if (!ledger) {
    out.push(
      `${own.path}: ${versionDir(own.manifest.version)} is not in this warehouse's ledger (reporting.export_versions): another warehouse published it, or the database was reset`,
    );
  }
  const state = await signoffStateOfDay(runtime.pool, own.manifest.day);
  const said = top.manifest.signoff?.state ?? null;
  if (state && ledger && said !== state.state)
    out.push(
      `${top.path}: says the day is ${said ?? '(no sign-off state)'}, the sign-off ledger says ${state.state}`,
    );
  return out;
}

/** The pack derived again now, into a temporary folder, in one snapshot (rolled back). */
async function deriveAgain(
  runtime: Runtime,
  client: PoolClient,
  own: Manifest,
  dir: string,
  now: Date,
): Promise<DerivedPack & { xlsx: string }> {
  const zone = runtime.settings.REPORT_TIMEZONE;
  const w = dayWindow(own.day, zone);
  const range: [Date, Date] = [w.start, w.end];
  const sources = runtime.settings.sources.map((s) => s.name);
  const coverage = await dayCoverage(client, sources, w, runtime.settings.SETTLE_LAG);
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  try {
    const job = { day: own.day, range, now, coverage, horizonMs: runtime.settings.SETTLE_HORIZON };
    const derived = await derivePack(runtime, client, job, dir);
    // the workbook shows its manifest (the about sheet): finished with the published one, minus its own entry
    const { xlsx: _entry, ...files } = own.files;
    const xlsx = (await derived.workbook.finish(client, { range, manifest: { ...own, files } })).sha256;
    return { ...derived, xlsx };
  } finally {
    await client.query('ROLLBACK');
  }
}

async function againstWarehouse(
  runtime: Runtime,
  dayDir: string,
  own: Manifest,
  now = new Date(),
): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'paysync-verify-'));
  const client = await runtime.pool.connect();
  try {
    const derived = await deriveAgain(runtime, client, own, dir, now);
    const out: string[] = [];
    const v = versionDir(own.version);
    // a pack written in another layout is compared by what it says, not by its bytes (a layout change is
    // not a restatement): the lists, the records digests and the state
    const sameLayout = (own.layout ?? 1) === PACK_LAYOUT;
    for (const name of sameLayout ? ALL_CSV : COMPARED_FILES) {
      const published = own.files[name]?.sha256 ?? null;
      const fresh = derived.files[name]?.sha256 ?? null;
      if (published === fresh) continue;
      const why =
        fresh === null
          ? ' (none: the file would not be written)'
          : published === null
            ? ' (the pack has no such file)'
            : '';
      out.push(`${join(dayDir, v, `${name}.csv`)}: the warehouse now gives other content${why}`);
      if ((name === 'payments' || name === 'transfers') && published !== null && fresh !== null)
        out.push(
          ...(await recordDifferences(name, join(dayDir, v, own.files[name].path), join(dir, `${name}.csv`))),
        );
    }
    if (sameLayout && own.files.xlsx && derived.xlsx !== own.files.xlsx.sha256)
      out.push(`${join(dayDir, v, own.files.xlsx.path)}: the warehouse now gives another workbook`);
    for (const stream of ['payments', 'transfers'] as const) {
      const said = own.digests?.[stream];
      if (said && said !== derived.digests[stream])
        out.push(
          `${stream} records digest: ${v} says ${said}, the warehouse now gives ${derived.digests[stream]}`,
        );
    }
    if (derived.state.state !== own.state)
      out.push(
        `state: ${v} says ${own.state}, an export now would say ${derived.state.state} (${derived.state.stateReason})`,
      );
    return out;
  } finally {
    client.release();
    await rm(dir, { recursive: true, force: true });
  }
}

/** Every earlier version on disk against its own manifest and the ledger, and ledger versions not on disk. */
async function earlierVersions(
  runtime: Runtime,
  dayDir: string,
  pack: { own: ReadManifest } | string,
): Promise<string[]> {
  const latest = typeof pack === 'string' ? null : pack.own.manifest.version;
  const out: string[] = [];
  const onDisk = await versionsOnDisk(dayDir);
  for (const version of onDisk.filter((n) => n !== latest)) {
    try {
      const own = await readVersionManifest(dayDir, version);
      if (!own) out.push(`${join(dayDir, versionDir(version), 'manifest.json')}: missing`);
      else out.push(...(await checkVersionOnDisk(runtime.pool, dayDir, own)));
    } catch (error) {
      out.push(describe(error));
    }
  }
  const day = dayDir.split('/').pop() as string;
  const { rows } = await runtime.pool.query<{ version: number }>(
    'SELECT version FROM reporting.export_versions WHERE day = $1::date ORDER BY version',
    [day],
  );
  for (const { version } of rows)
    if (!onDisk.includes(version))
      out.push(`${join(dayDir, versionDir(version))}: published (in the ledger), missing on disk`);
  return out;
}
