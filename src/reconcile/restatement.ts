/**
 * Restatements: what changed in a day since its latest published version, and which days need one.
 * Both read reporting.export_snapshot, the (id, status, amount, updated_at) of every record of the day's
 * latest version, replaced in the transaction that records a new version.
 */
import type { Pool, PoolClient } from 'pg';
import { CHANGED_SINCE_SQL, CHANGES_SQL } from './pack-query.js';
import type { ChangedRecord, Restatement } from './manifest.js';

/** Lists in the manifest stop here (the counts stay complete): a manifest must stay readable. */
export const MAX_LISTED = 1_000;

interface DiffRow {
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
