/**
 * Days that cannot be completed, never silent (principle 8): a local day (in REPORT_TIMEZONE) is
 * `blocked` when a payments window of it has failed BLOCKED_AFTER runs in a row for reasons other than an
 * outage (`sync_windows.failures`, sql/018: an outage leaves the count as it was, a complete run resets
 * it) and no complete read has covered it since. Read from the sync log, so every worker, `paysync
 * status`, the status page, /metrics (`paysync_day_blocked`) and `export --allow-incomplete` see the
 * same days with the same reasons. Transfers scans cover the whole list, not a day: not counted here.
 */
import type { Pool, PoolClient } from 'pg';
import { reasonOf, type ReasonCode } from '../sync/window-reasons.js';

export interface BlockedReason {
  code: ReasonCode;
  meaning: string;
  action: string;
  /** The latest failed run's words. */
  detail: string;
}

export interface BlockedDay {
  source: string;
  stream: 'payments';
  /** YYYY-MM-DD in the zone asked for. */
  day: string;
  /** The most consecutive failed runs of one of its windows. */
  failures: number;
  /** Each reason its blocked windows fail with, most recent first. */
  reasons: BlockedReason[];
  /** The latest failed run. */
  lastFailedAt: Date;
}

interface Row {
  source: string;
  day: string;
  reason_code: string | null;
  detail: string | null;
  failures: number;
  fetched_at: Date;
}

/** The blocked days of every source, oldest day first (`day`: only that one). */
export async function blockedDays(
  pool: Pool | PoolClient,
  zone: string,
  blockedAfter: number,
  day?: string,
): Promise<BlockedDay[]> {
  const { rows } = await (pool as Pool)
    .query<Row>(
      `SELECT f.source, to_char(f.window_start AT TIME ZONE $1, 'YYYY-MM-DD') AS day, f.reason_code, f.detail,
              f.failures, f.fetched_at
         FROM reporting.sync_windows f
        WHERE f.outcome <> 'complete' AND f.stream = 'payments' AND f.failures >= $2
          AND ($3::text IS NULL OR to_char(f.window_start AT TIME ZONE $1, 'YYYY-MM-DD') = $3)
          AND NOT EXISTS (
            SELECT 1 FROM reporting.sync_windows c
             WHERE c.source = f.source AND c.stream = f.stream AND c.outcome = 'complete'
               AND c.window_start <= f.window_start AND c.window_end >= f.window_end
               AND c.fetched_at >= f.fetched_at)
        ORDER BY day, f.source, f.fetched_at DESC`,
      [zone, blockedAfter, day ?? null],
    )
    .catch((error: { code?: string }) => {
      if (error.code === '42703' || error.code === '42P01') return { rows: [] as Row[] }; // not migrated yet
      throw error;
    });
  return groupDays(rows);
}

/** Rows (newest first within a day) grouped by source and day, each reason once. Pure. */
function groupDays(rows: readonly Row[]): BlockedDay[] {
  const days = new Map<string, BlockedDay>();
  for (const r of rows) {
    const key = `${r.source}\u0000${r.day}`;
    const day = days.get(key) ?? {
      source: r.source,
      stream: 'payments' as const,
      day: r.day,
      failures: 0,
      reasons: [],
      lastFailedAt: r.fetched_at,
    };
    days.set(key, day);
    day.failures = Math.max(day.failures, r.failures);
    const reason = reasonOf(r.reason_code);
    if (!day.reasons.some((x) => x.code === reason.code))
      day.reasons.push({
        code: reason.code,
        meaning: reason.meaning,
        action: reason.action,
        detail: r.detail ?? reason.meaning,
      });
  }
  return [...days.values()];
}

/** A blocked day as a pack's manifest carries it (`export --allow-incomplete`). Pure. */
export function manifestBlocked(d: BlockedDay): {
  source: string;
  stream: string;
  failures: number;
  reasons: BlockedReason[];
} {
  return { source: d.source, stream: d.stream, failures: d.failures, reasons: d.reasons };
}

/** One line per blocked day, for `status`'s attention list and the manifest. Pure. */
export function blockedDayLine(d: BlockedDay): string {
  const codes = d.reasons.map((r) => r.code).join(', ');
  return `${d.day} ${d.source}/${d.stream} blocked after ${d.failures} failed runs (${codes})`;
}

/** `status`'s section: each blocked day, its reasons with the latest words, and what to do. Pure. */
export function renderBlockedDays(days: readonly BlockedDay[], oneLine: (s: string) => string): string {
  if (days.length === 0) return '';
  const out = ['', 'blocked days (BLOCKED_AFTER failed runs in a row, outages aside):'];
  for (const d of days) {
    out.push(`  ${blockedDayLine(d)}; last at ${d.lastFailedAt.toISOString()}`);
    for (const r of d.reasons)
      out.push(`    ${r.code}: ${oneLine(r.detail)}`, `      what to do: ${r.action}`);
  }
  out.push(
    '  `paysync export --day D --allow-incomplete` publishes such a day marked incomplete, with these reasons',
  );
  return `${out.join('\n')}\n`;
}
