/**
 * The pack's manifest and its on-disk layout:
 *
 *   EXPORT_DIR/YYYY-MM-DD/manifest.json        the day's latest version; paths like `v2/payments.csv`
 *   EXPORT_DIR/YYYY-MM-DD/v1/{payments,transfers,summary}.csv, v1/manifest.json   (paths like `payments.csv`)
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

export const PACK_FILES = ['payments', 'transfers', 'summary'] as const;
export type PackFileName = (typeof PACK_FILES)[number];

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
  mismatches: number;
  rows: Array<{
    source: string;
    stream: string;
    status: string;
    service: number;
    warehouse: number;
    difference: number;
    method: string;
  }>;
}

export interface Manifest {
  day: string;
  timeZone: string;
  version: number;
  generatedAt: string;
  /** `final`: every record in a final state, or the settle horizon has passed; else `provisional`. */
  state: 'final' | 'provisional';
  stateReason: string;
  files: Record<PackFileName, ManifestFile> & WorkbookEntry;
  totals: { payments: StreamTotal; transfers: StreamTotal };
  reconcile: ReconcileSummary | null;
  restatement: Restatement | null;
}

export const versionDir = (version: number) => `v${version}`;

/** The same manifest with file paths relative to the day folder (the top manifest's view). */
export function topManifest(manifest: Manifest): Manifest {
  const files = { ...manifest.files };
  for (const name of PACK_FILES) {
    files[name] = { ...files[name], path: `${versionDir(manifest.version)}/${name}.csv` };
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

/** True when the freshly written files are byte for byte those of the published version. */
export function sameContent(latest: Manifest, files: Record<PackFileName, WrittenFile>): boolean {
  return PACK_FILES.every((name) => latest.files[name]?.sha256 === files[name].sha256);
}
