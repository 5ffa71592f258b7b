/**
 * Restatements: what changed in a day since its latest published version, and which days need one.
 * Both read reporting.export_snapshot, the (id, status, amount, updated_at) of every record of the day's
 * latest version, replaced in the transaction that records a new version. When that snapshot is not the
 * published version's (the pack on disk was written by another warehouse, or the database was reset:
 * a demo run on a later day), the previous version's records are read from its files instead, so that
 * every record it held and the new version does not is reported as removed.
 */
import { join } from 'node:path';
import type { Pool, PoolClient } from 'pg';
import { canonicalDecimal } from './decimal.js';
import { versionDir, type ChangedRecord, type Manifest, type Restatement } from './manifest.js';
import { diffRecordFiles, type RecordValues } from './pack-csv-diff.js';
import type { DayJob } from './pack-derive.js';
import { CHANGED_SINCE_SQL, CHANGES_SQL } from './pack-query.js';

/** Lists in the manifest stop here (the counts stay complete): a manifest must stay readable. */
export const MAX_LISTED = 1_000;

export interface DiffRow {
  stream: string;
  id: string;
  old_status: string | null;
  new_status: string | null;
  old_amount: string | null;
  new_amount: string | null;
}

/** Classifies diff rows into added / removed / changed. Pure. */
export function classifyChanges(rows: readonly DiffRow[], previousVersion: number): Restatement {
  const r: Restatement = {
    previousVersion,
    added: { count: 0, records: [] },
    removed: { count: 0, records: [] },
    changed: { count: 0, records: [] },
    truncated: false,
  };
  const list = <T>(bucket: { count: number; records: T[] }, item: T) => {
    bucket.count += 1;
    if (bucket.records.length < MAX_LISTED) bucket.records.push(item);
    else r.truncated = true;
  };
  for (const row of rows) {
    const { stream, id } = row;
    if (row.old_status === null) {
      list(r.added, { stream, id, status: row.new_status as string, amount: row.new_amount as string });
    } else if (row.new_status === null) {
      list(r.removed, { stream, id, status: row.old_status, amount: row.old_amount as string });
    } else {
      const change: ChangedRecord = { stream, id };
      if (row.old_status !== row.new_status) change.status = { old: row.old_status, new: row.new_status };
      // The SQL compares amounts as NUMERIC; the text is listed whenever it differs.
      if (row.old_amount !== row.new_amount) {
        change.amount = { old: row.old_amount as string, new: row.new_amount as string };
      }
      list(r.changed, change);
    }
  }
  return r;
}

/** Whether reporting.export_snapshot holds this very version's records: the ledger's latest, same manifest. */
async function snapshotIsOf(
  client: PoolClient,
  day: string,
  version: number,
  manifestSha256: string,
): Promise<boolean> {
  const { rows } = await client.query<{ version: number; manifest_sha256: string | null }>(
    `SELECT version, manifest_sha256 FROM reporting.export_versions WHERE day = $1::date ORDER BY version DESC LIMIT 1`,
    [day],
  );
  const r = rows[0];
  return r !== undefined && r.version === version && (r.manifest_sha256 ?? manifestSha256) === manifestSha256;
}

/**
 * The diff rows between two versions' records files (`oldDir`'s, as its manifest lists them, and those
 * just written into `newDir`): added, removed, and records whose status or amount changed (amounts
 * compared as numbers, as CHANGES_SQL does).
 */
export async function changesBetweenFiles(oldDir: string, old: Manifest, newDir: string): Promise<DiffRow[]> {
  const out: DiffRow[] = [];
  for (const stream of ['payments', 'transfers'] as const) {
    const diff = await diffRecordFiles(join(oldDir, old.files[stream].path), join(newDir, `${stream}.csv`));
    const row = (
      id: string,
      o: RecordValues['values'] | null,
      n: RecordValues['values'] | null,
    ): DiffRow => ({
      stream,
      id,
      old_status: o?.status ?? null,
      new_status: n?.status ?? null,
      old_amount: o?.amount ?? null,
      new_amount: n?.amount ?? null,
    });
    for (const r of diff.added) out.push(row(r.id, null, r.values));
    for (const r of diff.removed) out.push(row(r.id, r.values, null));
    for (const c of diff.changed) {
      const { status, amount } = c.columns;
      const amountMoved = amount && canonicalDecimal(amount.old) !== canonicalDecimal(amount.new);
      if (!status && !amountMoved) continue;
      out.push(row(c.id, c.old, c.new));
    }
  }
  return out.sort((a, b) => (a.stream === b.stream ? (a.id < b.id ? -1 : 1) : a.stream < b.stream ? -1 : 1));
}

/**
 * What changed since the published version, from the snapshot when it is that version's (read before
 * the snapshot is replaced); null when it is not, and the version's files must decide
 * (restatementFromFiles).
 */
export async function restatementFromSnapshot(
  client: PoolClient,
  job: DayJob,
  published: { own: Manifest; ownSha256: string },
): Promise<Restatement | null> {
  const { version } = published.own;
  if (!(await snapshotIsOf(client, job.day, version, published.ownSha256))) return null;
  return changesSinceSnapshot(client, job.range, job.day, version);
}

/**
 * What changed since the published version, from its files (checked against their manifest before this
 * is called) and the new version's, once written into `newDir`.
 */
export async function restatementFromFiles(
  dayDir: string,
  published: { own: Manifest },
  newDir: string,
): Promise<Restatement> {
  const { version } = published.own;
  const rows = await changesBetweenFiles(join(dayDir, versionDir(version)), published.own, newDir);
  return classifyChanges(rows, version);
}

export async function changesSinceSnapshot(
  client: PoolClient,
  range: [Date, Date],
  day: string,
  previousVersion: number,
): Promise<Restatement> {
  const { rows } = await client.query<DiffRow>(CHANGES_SQL, [...range, day]);
  return classifyChanges(rows, previousVersion);
}

/**
 * Whether any record of the day was added, removed or updated since its latest version: the records'
 * identity, status, amount and updated_at against the version's snapshot. updated_at stands for every
 * other field: the warehouse's upserts only ever move a record forward, to a later updated_at.
 */
export async function changedSinceLastVersion(
  db: Pick<Pool | PoolClient, 'query'>,
  range: [Date, Date],
  day: string,
): Promise<boolean> {
  const { rows } = await (db as Pool).query<{ changed: boolean }>(CHANGED_SINCE_SQL, [...range, day]);
  return rows[0]?.changed ?? false;
}

/** Days from `fromDay` on (inclusive) that already have a published version. */
export async function publishedDaysSince(pool: Pool, fromDay: string): Promise<string[]> {
  const { rows } = await pool.query<{ day: string }>(
    `SELECT DISTINCT day::text AS day FROM reporting.export_versions WHERE day >= $1::date ORDER BY 1`,
    [fromDay],
  );
  return rows.map((r) => r.day);
}
