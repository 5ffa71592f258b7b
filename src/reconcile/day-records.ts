/**
 * The warehouse's side of one source, stream and local day, for reconcile: its records (id, status, exact
 * amount) and its quarantined records (open sync_rejects). A reject belongs to the day when the service
 * listed its id for the day, or, having no readable id, when its raw createdAt falls in the day.
 */
import type { Pool, PoolClient } from 'pg';
import type { Window } from '../sync/windows.js';
import type { DayRejects, WarehouseRecord } from './record-diff.js';
import type { Tally } from './reconcile-table.js';
import { sumDecimals } from './decimal.js';

export type StreamName = 'payments' | 'transfers';
type Db = Pool | PoolClient;

const TABLE: Record<StreamName, string> = {
  payments: 'reporting.payments',
  transfers: 'reporting.transfers',
};

export async function warehouseDay(
  db: Db,
  source: string,
  stream: StreamName,
  w: Window,
): Promise<WarehouseRecord[]> {
  const { rows } = await db.query<WarehouseRecord>(
    `SELECT id, status, amount::text AS amount FROM ${TABLE[stream]}
      WHERE source = $1 AND created_at >= $2 AND created_at < $3`,
    [source, w.start, w.end],
  );
  return rows;
}

/** Count and exact sum per status, from the records. */
export function talliesOf(records: readonly WarehouseRecord[]): Map<string, Tally> {
  const groups = new Map<string, string[]>();
  for (const r of records) {
    const list = groups.get(r.status);
    if (list) list.push(r.amount);
    else groups.set(r.status, [r.amount]);
  }
  return new Map(
    [...groups].map(([status, amounts]) => [status, { count: amounts.length, amount: sumDecimals(amounts) }]),
  );
}

/**
 * The complete windows of the stream overlapping the day whose reads confirmed records listed more than
 * once (their row's `duplicates`, DUPLICATES_LISTED): where reconcile counts a second listing as a copy.
 */
export async function copiedWindows(
  db: Db,
  source: string,
  stream: StreamName,
  w: Window,
): Promise<Array<{ start: Date; end: Date }>> {
  const { rows } = await db.query<{ start: Date; end: Date }>(
    `SELECT window_start AS start, window_end AS end FROM reporting.sync_windows
      WHERE source = $1 AND stream = $2 AND outcome = 'complete' AND duplicates > 0
        AND window_start < $4 AND window_end > $3`,
    [source, stream, w.start, w.end],
  );
  return rows;
}

/** The raw record's status as reconcile reads a listed item's (record-diff: '(none)' when unusable). */
const RAW_STATUS = `CASE WHEN jsonb_typeof(raw->'status') = 'string' AND raw->>'status' <> ''
                         THEN raw->>'status' ELSE '(none)' END`;

export async function dayRejects(
  db: Db,
  source: string,
  stream: StreamName,
  w: Window,
  listedIds: readonly string[],
): Promise<DayRejects> {
  const { rows } = await db.query<{ record_id: string | null; status: string; reason: string }>(
    `SELECT record_id, ${RAW_STATUS} AS status, reason FROM reporting.sync_rejects
      WHERE source = $1 AND stream = $2 AND resolved_at IS NULL
        AND (record_id = ANY($3::text[])
             OR (record_id IS NULL AND reporting.try_timestamptz(raw->>'createdAt') >= $4
                 AND reporting.try_timestamptz(raw->>'createdAt') < $5))
      ORDER BY reject_id`,
    [source, stream, listedIds, w.start, w.end],
  );
  const byId = new Map<string, string>();
  const anonymous: Array<{ status: string; reason: string }> = [];
  for (const r of rows) {
    if (r.record_id === null) anonymous.push({ status: r.status, reason: r.reason });
    else if (!byId.has(r.record_id)) byId.set(r.record_id, r.reason);
  }
  return { byId, anonymous };
}
