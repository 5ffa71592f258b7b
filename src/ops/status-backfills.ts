/**
 * Running and recent backfills for the status page, from PostgreSQL (sql/010, backfill-store.ts): progress,
 * items done/failed/left, the failed items with why, and the pace. The rate is items finished per hour since
 * the first item started; an ETA is given only when there is a rate (nothing finished yet: "no progress yet").
 */
import type { Pool } from 'pg';
import type { RequestPace } from '../sync/request-pace.js';
import {
  failedItems,
  listBackfills,
  type BackfillSummary,
  type FailedItem,
} from '../warehouse/backfill-store.js';

/** Finished backfills shown beside the running ones: the newest few of the last week. */
const RECENT = 5;
const RECENT_MS = 7 * 86_400_000;
const FAILED_LISTED = 5;

export interface BackfillView extends BackfillSummary {
  left: number;
  /** When its first item started (null: none has). */
  startedAt: Date | null;
  failedItems: FailedItem[];
  /** A running backfill's sources: requests per second at the service against the ceiling, and latency. */
  pace?: RequestPace[];
}

export interface BackfillPace {
  /** Items finished (done or failed) per hour; null before any finished. */
  perHour: number | null;
  /** Milliseconds until the items left are done at that rate; null without a rate or when none are left. */
  etaMs: number | null;
}

export async function gatherBackfills(pool: Pool, now: Date): Promise<BackfillView[]> {
  const all = await listBackfills(pool, { limit: 50 });
  const shown = [
    ...all.filter((b) => b.state === 'running'),
    ...all
      .filter((b) => b.state !== 'running' && now.getTime() - (b.finishedAt?.getTime() ?? 0) < RECENT_MS)
      .slice(0, RECENT),
  ];
  if (shown.length === 0) return [];
  const { rows } = await pool.query<{ id: number; started: Date | null }>(
    `SELECT backfill_id::int AS id, min(started_at) AS started FROM reporting.backfill_items
      WHERE backfill_id = ANY($1::bigint[]) GROUP BY backfill_id`,
    [shown.map((b) => b.id)],
  );
  const started = new Map(rows.map((r) => [r.id, r.started]));
  return Promise.all(
    shown.map(async (b) => ({
      ...b,
      left: b.total - b.done - b.failed - b.cancelled,
      startedAt: started.get(b.id) ?? null,
      failedItems: b.failed > 0 ? (await failedItems(pool, b.id)).slice(0, FAILED_LISTED) : [],
    })),
  );
}

/** Rate and ETA, pure. */
export function paceOf(
  b: Pick<BackfillView, 'done' | 'failed' | 'left' | 'startedAt' | 'finishedAt'>,
  now: Date,
): BackfillPace {
  const finished = b.done + b.failed;
  if (!b.startedAt || finished === 0) return { perHour: null, etaMs: null };
  const end = b.finishedAt ?? now;
  const hours = Math.max(end.getTime() - b.startedAt.getTime(), 1_000) / 3_600_000;
  const perHour = finished / hours;
  return { perHour, etaMs: b.left > 0 ? (b.left / perHour) * 3_600_000 : null };
}
