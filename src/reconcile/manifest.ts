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
import { rename, writeFile } from 'node:fs/promises';
import type { WrittenFile } from './pack-writer.js';
import type { WorkbookEntry } from './pack-xlsx.js';

/**
 * The version of the pack's layout: which files a version holds, their columns and formats, the
 * workbook's sheets, their order and cell formats. Bump it whenever any of them changes. Each manifest
 * names the layout its version was written with (one written before this was named has none: layout 1).
 * A layout change alone never makes a new version: a day's version changes only when what it says
 * changes (export-day.ts), so a re-export of an unchanged day keeps its version in the layout it has.
 */
export const PACK_LAYOUT = 3;

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
 * the settle horizon passed, the last reconcile found no unexplained difference, and a suspiciously
 * empty stream was confirmed empty by two reads. `provisional`: covered, but one of the others is not
 * true yet. `incomplete`: published with --allow-incomplete before sync covered the day.
 */
export type PackState = 'final' | 'provisional' | 'incomplete';

/** Per stream, the SHA-256 (hex) of the day's records as docs/finance.md defines it (records-digest.ts). */
export interface RecordsDigests {
  payments: string;
  transfers: string;
}

/** A stream of a source found empty on a day that followed seven busy ones, and the two reads that say so. */
export interface EmptyEvidence {
  source: string;
  stream: 'payments' | 'transfers';
  /** The two reads (ISO instants), at least an hour apart, both after the day ended. */
  reads: [string, string];
  /** "empty, confirmed by reads at T1 and T2". */
  text: string;
}

/** A sign-off as recorded in reporting.signoffs. */
export interface SignedVersion {
  version: number;
  by: string;
  at: string;
  note: string | null;
  /** SHA-256 of that version's own vN/manifest.json. */
  manifestSha256: string;
}

/**
 * In a version's own manifest: this version restates a day whose earlier version finance had signed off.
 * A fact at publishing time, so it stays true: whether the new version was signed since is in the day's
 * top manifest (`signoff`) and `paysync signoff --list`.
 */
export interface RestatedAfterSignoff {
  signed: SignedVersion;
  /** What changed since the signed version; null when its files no longer allow listing it (see note). */
  changes: Restatement | null;
  note: string;
}

export type SignoffStateName =
  'signed' | 'needs sign-off' | 'restated after sign-off' | 'revoked' | 'not final';

/** In the day's top manifest only: the sign-off state now (rewritten by export and by signoff). */
export interface SignoffState {
  state: SignoffStateName;
  /** The day's latest version. */
  version: number;
  /** The sign-off in force (the latest not revoked), or null. */
  signed: SignedVersion | null;
  /** In words, with what to do. */
  summary: string;
}

/**
 * A blocked day's facts (src/ops/blocked-days.ts): per source and stream, the consecutive failed runs and
 * each reason code with its meaning, what to do, and the latest words. Carried by a pack published with
 * --allow-incomplete while the day is blocked, and by the day's top manifest while it stays so.
 */
export interface BlockedFacts {
  source: string;
  stream: string;
  failures: number;
  reasons: Array<{ code: string; meaning: string; action: string; detail: string }>;
}

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
  /** The day's latest reconcile as known when the manifest was written (the top manifest: now). */
  reconcile: ReconcileSummary | null;
  restatement: Restatement | null;
  /** Absent from versions written before paysync computed digests. */
  digests?: RecordsDigests;
  /** Streams confirmed empty on a day that followed seven busy ones (absent or empty: none). */
  emptyConfirmed?: EmptyEvidence[];
  /** The day is blocked (BLOCKED_AFTER failed runs, outages aside): why, per source and stream (absent: not). */
  blocked?: BlockedFacts[];
  /** Set when this version restates a day finance had signed off (null: it does not). */
  restatedAfterSignoff?: RestatedAfterSignoff | null;
  /** Where the facts that change after publishing (reconcile, sign-off) are kept. */
  current?: string;
  /** The top manifest only: the day's sign-off state now. */
  signoff?: SignoffState;
}

/** What a version's own manifest says about the facts it cannot keep true by itself. */
export const VERSION_CURRENT =
  "this version's files never change; the day's latest reconcile result and sign-off state are in the day's " +
  'top manifest.json, `paysync status`, `paysync signoff --list` and reporting.reconcile_results';
/** What the day's top manifest says of itself. */
export const TOP_CURRENT =
  'rewritten when the day is exported, reconciled or signed off: its reconcile and signoff are the latest; ' +
  'the files are those of the version it names, whose own manifest.json never changes';

export const versionDir = (version: number) => `v${version}`;

/**
 * The same manifest with file paths relative to the day folder (the top manifest's view), saying that it
 * is rewritten, with the sign-off state now.
 */
export function topManifest(manifest: Manifest, signoff?: SignoffState): Manifest {
  const files = { ...manifest.files };
  for (const name of [...PACK_FILES, ...OPTIONAL_PACK_FILES]) {
    const file = files[name];
    if (file) files[name] = { ...file, path: `${versionDir(manifest.version)}/${name}.csv` };
  }
  if (files.xlsx) files.xlsx = { ...files.xlsx, path: `${versionDir(manifest.version)}/${files.xlsx.path}` };
  return { ...manifest, files, current: TOP_CURRENT, ...(signoff ? { signoff } : {}) };
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

/** Versions are numbered 1 to the largest value of reporting.export_versions.version (an integer). */
export const MAX_VERSION = 2_147_483_647;
