/**
 * The pack's manifest and its on-disk layout:
 *
 *   EXPORT_DIR/YYYY-MM-DD/manifest.json        the day's latest version; paths like `v2/payments.csv`
 *   EXPORT_DIR/YYYY-MM-DD/v1/{payments,transfers,summary,rejects}.csv, v1/manifest.json  (paths like `payments.csv`)
 *   EXPORT_DIR/YYYY-MM-DD/v1/differences.csv   only when the day's last reconcile listed records
 *   EXPORT_DIR/YYYY-MM-DD/v2/…
 *
 * A version folder is written under a temporary name and renamed whole, and never touched again. The
 * day's top manifest is the only file ever replaced, always by writing a temporary file and renaming it
 * over the old one (atomic on POSIX), so a reader sees the old manifest or the new one, never a mix.
 */
import { randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { WrittenFile } from './pack-writer.js';
import type { WorkbookEntry } from './pack-xlsx.js';

/**
 * The version of the pack's layout: which files a version holds, their columns and formats, the
 * workbook's sheets, their order and cell formats. Bump it whenever any of them changes. Each manifest
 * names the layout its version was written with (one written before this was named has none: layout 1).
 * A layout change alone never makes a new version: a day's version changes only when what it says
 * changes (export-day.ts), so a re-export of an unchanged day keeps its version in the layout it has.
 */
export const PACK_LAYOUT = 2;

export const PACK_FILES = ['payments', 'transfers', 'summary', 'rejects'] as const;
export type PackFileName = (typeof PACK_FILES)[number];
/** Files a version has only when it has something to put in them. */
export const OPTIONAL_PACK_FILES = ['differences'] as const;
export type OptionalPackFileName = (typeof OPTIONAL_PACK_FILES)[number];
export type PackFiles<F> = Record<PackFileName, F> & Partial<Record<OptionalPackFileName, F>>;

export interface ManifestFile extends WrittenFile {
  path: string;
}

export interface StreamTotal {
  records: number;
  amount: string;
}

export interface ChangedRecord {
  stream: string;
  id: string;
  status?: { old: string; new: string };
  amount?: { old: string; new: string };
}

export interface Restatement {
  previousVersion: number;
  added: { count: number; records: Array<{ stream: string; id: string; status: string; amount: string }> };
  removed: { count: number; records: Array<{ stream: string; id: string; status: string; amount: string }> };
  changed: { count: number; records: ChangedRecord[] };
  /** True when a list holds only the first MAX_LISTED records (the counts are always complete). */
  truncated: boolean;
}

export interface ReconcileSummary {
  checkedAt: string;
  /** Rows with an unexplained difference (0: the warehouse matches the service, quarantine aside). */
  mismatches: number;
  /** Records of the day the service lists and paysync holds in sync_rejects. */
  quarantined: number;
  /** Records behind the differences, by kind (missing_in_warehouse, missing_at_source, different, quarantined). */
  records: Record<string, number>;
  rows: Array<{
    source: string;
    stream: string;
    status: string;
    service: number;
    warehouse: number;
    difference: number;
    quarantined: number;
    unexplained: number;
    /** False where the service's figures give no amounts (a wrapper total): amounts were not compared. */
    amountCompared: boolean;
    method: string;
  }>;
}

/**
 * `final`: sync covers the whole day for every source and stream, every record is in a final state or
 * the settle horizon passed, and the last reconcile found no unexplained difference. `provisional`:
 * covered, but one of the other two is not true yet. `incomplete`: published with --allow-incomplete
 * before sync covered the day.
 */
export type PackState = 'final' | 'provisional' | 'incomplete';

export interface Manifest {
  day: string;
  timeZone: string;
  version: number;
  /** PACK_LAYOUT when this version was written (absent: 1). */
  layout?: number;
  generatedAt: string;
  state: PackState;
  stateReason: string;
  files: PackFiles<ManifestFile> & WorkbookEntry;
  totals: { payments: StreamTotal; transfers: StreamTotal };
  /** The day's quarantined records (rejects.csv), per stream. */
  quarantined: { payments: number; transfers: number };
  reconcile: ReconcileSummary | null;
  restatement: Restatement | null;
}

export const versionDir = (version: number) => `v${version}`;

/** The same manifest with file paths relative to the day folder (the top manifest's view). */
export function topManifest(manifest: Manifest): Manifest {
  const files = { ...manifest.files };
  for (const name of [...PACK_FILES, ...OPTIONAL_PACK_FILES]) {
    const file = files[name];
    if (file) files[name] = { ...file, path: `${versionDir(manifest.version)}/${name}.csv` };
  }
  if (files.xlsx) files.xlsx = { ...files.xlsx, path: `${versionDir(manifest.version)}/${files.xlsx.path}` };
  return { ...manifest, files };
}

export function manifestText(manifest: Manifest): string {
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

/** Writes `text` to `path` through a temporary file renamed over it. */
export async function replaceFileAtomically(path: string, text: string): Promise<void> {
  const temp = `${path}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  await writeFile(temp, text, { flag: 'wx', flush: true });
  await rename(temp, path);
}

/** The day's latest manifest, or null when the day has never been exported. */
export async function readLatestManifest(dayDir: string): Promise<Manifest | null> {
  try {
    return JSON.parse(await readFile(join(dayDir, 'manifest.json'), 'utf8')) as Manifest;
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return null;
    throw error;
  }
}

/**
 * The files compared byte for byte to tell an unchanged day: the day's quarantined records and its
 * reconcile differences. The records files are compared by their records instead (the export snapshot:
 * restatement.ts), so that their layout is not part of the comparison; summary.csv follows from the
 * records and the workbook shows all of these. (These two files' layouts have not changed since they
 * were first written; a layout change that alters them must compare their rows instead.)
 */
export const COMPARED_FILES = ['rejects', 'differences'] as const;

/** True when the freshly written lists (COMPARED_FILES) are byte for byte those of the published version. */
export function sameLists(latest: Manifest, files: PackFiles<WrittenFile>): boolean {
  return COMPARED_FILES.every((name) => latest.files[name]?.sha256 === files[name]?.sha256);
}
