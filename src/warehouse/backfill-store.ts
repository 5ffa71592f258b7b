/**
 * Durable backfills (sql/010): what each backfill asked for, each of its items' state, and its progress.
 * PostgreSQL is the truth of what remains to be done; the Redis queue is re-filled from `openItems`.
 *
 * For the status command and page: `listBackfills(pool, { running: true })` returns the running
 * backfills with their progress (items done, failed, running, queued; records; runs), newest first.
 */
import type pg from 'pg';
import type { PlannedJob } from '../sync/backfill.js';
import type { ItemVerdict } from '../sync/ports.js';
import type { BackfillWork } from '../sync/work.js';
import { withTransaction } from './pool.js';

export type BackfillState = 'running' | 'done' | 'failed' | 'cancelled';
export type ItemState = 'queued' | 'running' | 'done' | 'failed' | 'cancelled';

export interface BackfillRequest {
  sources: string[];
  streams: string[];
  fromDay: string;
  toDay: string;
  timeZone: string;
}

export interface BackfillSummary extends BackfillRequest {
  id: number;
  state: BackfillState;
  requestedAt: Date;
  finishedAt: Date | null;
  total: number;
  queued: number;
  running: number;
  done: number;
  failed: number;
  cancelled: number;
  /** Records loaded by the items done so far. */
  records: number;
  /** Starts of items, all told: above `total` when items were re-run after a crash or a retry. */
  runs: number;
}

export interface OpenItem {
  backfillId: number;
  key: string;
  name: 'window' | 'scan';
  data: BackfillWork;
  state: 'queued' | 'running';
}

export interface FailedItem {
  label: string;
  detail: string | null;
}

const SUMMARY_SQL = `
  SELECT b.id::int AS id, b.sources, b.streams, b.from_day::text AS "fromDay", b.to_day::text AS "toDay",
         b.time_zone AS "timeZone", b.state, b.requested_at AS "requestedAt", b.finished_at AS "finishedAt",
         count(i.*)::int AS total,
         count(*) FILTER (WHERE i.state = 'queued')::int AS queued,
         count(*) FILTER (WHERE i.state = 'running')::int AS running,
         count(*) FILTER (WHERE i.state = 'done')::int AS done,
         count(*) FILTER (WHERE i.state = 'failed')::int AS failed,
         count(*) FILTER (WHERE i.state = 'cancelled')::int AS cancelled,
         coalesce(sum(i.records) FILTER (WHERE i.state = 'done'), 0)::int AS records,
         coalesce(sum(i.runs), 0)::int AS runs
    FROM reporting.backfills b
    LEFT JOIN reporting.backfill_items i ON i.backfill_id = b.id`;

/**
 * Records a backfill and its items, or returns the unfinished backfill of the same request (same
 * sources, streams, days and zone) when there is one: re-running a range while it runs adds nothing.
 * `traceparent`: the span recording it (tracing on); `trace` is the one the backfill keeps (the first
 * recording's, for a reused backfill), which its items' spans link to.
 */
export async function recordBackfill(
  pool: pg.Pool,
  request: BackfillRequest,
  items: readonly PlannedJob[],
  traceparent?: string | null,
): Promise<{ backfill: BackfillSummary; reused: boolean; trace: string | null }> {
  const id = await withTransaction(pool, async (client) => {
    // Two `backfill` commands of the same range at once: the second waits and then finds the first.
    await client.query(`SELECT pg_advisory_xact_lock(hashtext('paysync.backfills'))`);
    const same = await client.query<{ id: number; trace: string | null }>(
      `SELECT id::int AS id, trace_parent AS trace FROM reporting.backfills
        WHERE state = 'running' AND sources = $1 AND streams = $2 AND from_day = $3 AND to_day = $4
          AND time_zone = $5
        ORDER BY id LIMIT 1`,
      [request.sources, request.streams, request.fromDay, request.toDay, request.timeZone],
    );
    if (same.rows[0]) return { id: same.rows[0].id, reused: true, trace: same.rows[0].trace };
    const inserted = await client.query<{ id: number }>(
      `INSERT INTO reporting.backfills (sources, streams, from_day, to_day, time_zone, trace_parent)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING id::int AS id`,
      [
        request.sources,
        request.streams,
        request.fromDay,
        request.toDay,
        request.timeZone,
        traceparent ?? null,
      ],
    );
    const backfillId = (inserted.rows[0] as { id: number }).id;
    await client.query(
      `INSERT INTO reporting.backfill_items (backfill_id, item_key, name, source, stream, window_start, window_end, label)
       SELECT $1, k, n, s, st, to_timestamp(ws / 1000.0), to_timestamp(we / 1000.0), l
         FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::float8[], $7::float8[], $8::text[])
              AS t(k, n, s, st, ws, we, l)`,
      [
        backfillId,
        items.map((i) => i.id),
        items.map((i) => i.name),
        items.map((i) => i.data.source),
        items.map((i) => i.data.stream),
        items.map((i) => (i.data.stream === 'payments' ? i.data.start : null)),
        items.map((i) => (i.data.stream === 'payments' ? i.data.end : null)),
        items.map((i) => i.label),
      ],
    );
    return { id: backfillId, reused: false, trace: traceparent ?? null };
  });
  return {
    backfill: (await getBackfill(pool, id.id)) as BackfillSummary,
    reused: id.reused,
    trace: id.trace,
  };
}

export async function getBackfill(pool: pg.Pool, id: number): Promise<BackfillSummary | null> {
  const { rows } = await pool.query<BackfillSummary>(`${SUMMARY_SQL} WHERE b.id = $1 GROUP BY b.id`, [id]);
  return rows[0] ?? null;
}

/** Backfills with their progress, newest first; with `running`, only the unfinished ones. */
export async function listBackfills(
  pool: pg.Pool,
  options: { running?: boolean; limit?: number } = {},
): Promise<BackfillSummary[]> {
  const { rows } = await pool.query<BackfillSummary>(
    `${SUMMARY_SQL} WHERE ($1::boolean IS NOT TRUE OR b.state = 'running')
      GROUP BY b.id ORDER BY b.id DESC LIMIT $2`,
    [options.running ?? false, options.limit ?? 50],
  );
  return rows;
}

/** The failed items of a backfill, with why. */
export async function failedItems(pool: pg.Pool, id: number): Promise<FailedItem[]> {
  const { rows } = await pool.query<FailedItem>(
    `SELECT label, detail FROM reporting.backfill_items
      WHERE backfill_id = $1 AND state = 'failed' ORDER BY window_start NULLS LAST, item_key`,
    [id],
  );
  return rows;
}

/** Every item still queued or running of every running backfill: what the Redis queue must hold. */
export async function openItems(pool: pg.Pool): Promise<OpenItem[]> {
  const { rows } = await pool.query<{
    backfillId: number;
    key: string;
    name: 'window' | 'scan';
    source: string;
    start: Date | null;
    end: Date | null;
    state: 'queued' | 'running';
    trace: string | null;
  }>(
    `SELECT i.backfill_id::int AS "backfillId", i.item_key AS key, i.name, i.source,
            i.window_start AS start, i.window_end AS "end", i.state, b.trace_parent AS trace
       FROM reporting.backfill_items i JOIN reporting.backfills b ON b.id = i.backfill_id
      WHERE b.state = 'running' AND i.state IN ('queued', 'running')
      ORDER BY i.backfill_id, i.window_start NULLS LAST, i.item_key`,
  );
  return rows.map((r) => ({
    backfillId: r.backfillId,
    key: r.key,
    name: r.name,
    state: r.state,
    data:
      r.name === 'window'
        ? {
            source: r.source,
            stream: 'payments',
            start: (r.start as Date).getTime(),
            end: (r.end as Date).getTime(),
            kind: 'backfill',
            backfillId: r.backfillId,
            ...(r.trace ? { trace: r.trace } : {}),
          }
        : {
            source: r.source,
            stream: 'transfers',
            kind: 'backfill',
            backfillId: r.backfillId,
            ...(r.trace ? { trace: r.trace } : {}),
          },
  }));
}

/**
 * Marks an item started (counting the run). False when it must not run: it is finished already (a
 * duplicate job), or its backfill was cancelled.
 */
export async function startItem(pool: pg.Pool, backfillId: number, key: string): Promise<boolean> {
  const { rowCount } = await pool.query(
    `UPDATE reporting.backfill_items i SET state = 'running', runs = runs + 1, started_at = now()
       FROM reporting.backfills b
      WHERE b.id = i.backfill_id AND b.state = 'running'
        AND i.backfill_id = $1 AND i.item_key = $2 AND i.state IN ('queued', 'running')`,
    [backfillId, key],
  );
  return (rowCount ?? 0) > 0;
}

/**
 * An item's verdict, and its backfill's when it was the last one open (done, or failed when any item
 * failed). Written after the item's rows are committed: a crash before this leaves it running, and the
 * item is run again.
 */
export async function finishItem(
  pool: pg.Pool,
  backfillId: number,
  key: string,
  verdict: ItemVerdict,
): Promise<void> {
  await withTransaction(pool, async (client) => {
    // Two items of one backfill finishing at once would each see the other still open and neither would
    // settle the backfill: locking its row first serialises them, and the second sees the first's verdict.
    await client.query('SELECT 1 FROM reporting.backfills WHERE id = $1 FOR UPDATE', [backfillId]);
    await client.query(
      `UPDATE reporting.backfill_items SET state = $3, records = $4, detail = $5, finished_at = now()
        WHERE backfill_id = $1 AND item_key = $2 AND state IN ('queued', 'running')`,
      [backfillId, key, verdict.state, verdict.records, verdict.detail],
    );
    await client.query(SETTLE_SQL, [backfillId]);
  });
}

/**
 * Settles every running backfill with no item left open (done, or failed when an item failed). The
 * re-fill runs it too, so a backfill whose last verdict was written by a process that died before
 * settling it still ends.
 */
export async function settleBackfills(pool: pg.Pool): Promise<void> {
  await pool.query(SETTLE_SQL, [null]);
}

const SETTLE_SQL = `UPDATE reporting.backfills b
          SET state = CASE WHEN EXISTS (SELECT 1 FROM reporting.backfill_items f
                                         WHERE f.backfill_id = b.id AND f.state = 'failed')
                           THEN 'failed' ELSE 'done' END,
              finished_at = now()
        WHERE ($1::bigint IS NULL OR b.id = $1) AND b.state = 'running'
          AND NOT EXISTS (SELECT 1 FROM reporting.backfill_items o
                           WHERE o.backfill_id = b.id AND o.state IN ('queued', 'running'))`;

/**
 * Cancels a running backfill: its open items will not run (one already running finishes its window).
 * Returns the backfill afterwards and whether this call cancelled it (null: no such backfill).
 */
export async function cancelBackfill(
  pool: pg.Pool,
  id: number,
): Promise<{ backfill: BackfillSummary; cancelled: boolean } | null> {
  const cancelled = await withTransaction(pool, async (client) => {
    const { rowCount } = await client.query(
      `UPDATE reporting.backfills SET state = 'cancelled', finished_at = now()
        WHERE id = $1 AND state = 'running'`,
      [id],
    );
    if (!rowCount) return false;
    await client.query(
      `UPDATE reporting.backfill_items SET state = 'cancelled', finished_at = now()
        WHERE backfill_id = $1 AND state IN ('queued', 'running')`,
      [id],
    );
    return true;
  });
  const backfill = await getBackfill(pool, id);
  return backfill ? { backfill, cancelled } : null;
}

/** The labels of a backfill's items in the given states (what is left, what failed), in window order. */
export async function itemLabels(pool: pg.Pool, id: number, states: readonly ItemState[]): Promise<string[]> {
  const { rows } = await pool.query<{ label: string }>(
    `SELECT label FROM reporting.backfill_items
      WHERE backfill_id = $1 AND state = ANY($2::text[]) ORDER BY window_start NULLS LAST, item_key`,
    [id, states],
  );
  return rows.map((r) => r.label);
}
