/**
 * Why windows are failing now, read from the sync log (`reporting.sync_windows`): the windows whose last
 * run was not complete and that no later complete run covers, grouped by reason code, each with the
 * reasons table's meaning and what to do (src/sync/window-reasons.ts). What `paysync status` prints
 * and what the status page and health phases can read. Reads PostgreSQL; never writes.
 */
import type { Pool } from 'pg';
import { reasonOf, type ReasonCode } from '../sync/window-reasons.js';

export interface FailingWindow {
  source: string;
  stream: string;
  windowStart: Date;
  windowEnd: Date;
  kind: string;
  outcome: 'incomplete' | 'failed';
  reasonCode: ReasonCode;
  detail: string | null;
  /** Consecutive runs failed for reasons counting towards BLOCKED_AFTER. */
  failures: number;
  attempts: number;
  fetchedAt: Date;
}

export interface FailingReason {
  code: ReasonCode;
  meaning: string;
  action: string;
  outage: boolean;
  /** Windows failing with it now. */
  windows: number;
  /** `source/stream` pairs concerned. */
  streams: string[];
  /** The most recent of them. */
  latest: FailingWindow;
}

/** At most this many failing windows are read (the newest first): enough to name every reason. */
const READ_LIMIT = 500;

/**
 * The windows failing now, newest first: last run not complete, and no complete run fetched since covers
 * their span (a day read whole again heals its failed sub-windows; a later full scan heals a scan).
 * At most `limit` in all and `perStream` per source and stream (so one stream's long outage cannot hide
 * another stream's failures from the health phases, status-data.ts).
 */
export async function failingWindows(
  pool: Pool,
  limit = READ_LIMIT,
  perStream = READ_LIMIT,
): Promise<FailingWindow[]> {
  const { rows } = await pool.query<FailingWindow>(
    `SELECT source, stream, "windowStart", "windowEnd", kind, outcome, "reasonCode", detail, failures,
            attempts, "fetchedAt"
       FROM (SELECT f.source, f.stream, f.window_start AS "windowStart", f.window_end AS "windowEnd", f.kind,
                    f.outcome, coalesce(f.reason_code, 'UNCLASSIFIED') AS "reasonCode", f.detail, f.failures,
                    f.attempts, f.fetched_at AS "fetchedAt",
                    row_number() OVER (PARTITION BY f.source, f.stream ORDER BY f.fetched_at DESC) AS n
               FROM reporting.sync_windows f
              WHERE f.outcome <> 'complete'
                AND NOT EXISTS (
                  SELECT 1 FROM reporting.sync_windows c
                   WHERE c.source = f.source AND c.stream = f.stream AND c.outcome = 'complete'
                     AND c.window_start <= f.window_start AND c.window_end >= f.window_end
                     AND c.fetched_at >= f.fetched_at)) w
      WHERE n <= $2
      ORDER BY "fetchedAt" DESC, source, stream, "windowStart"
      LIMIT $1`,
    [limit, perStream],
  );
  return rows.map((r) => ({ ...r, reasonCode: reasonOf(r.reasonCode).code }));
}

/** The failing windows grouped by reason, the most widespread first. Pure. */
export function byReason(windows: readonly FailingWindow[]): FailingReason[] {
  const groups = new Map<ReasonCode, FailingReason>();
  for (const w of windows) {
    const group = groups.get(w.reasonCode);
    const stream = `${w.source}/${w.stream}`;
    if (group) {
      group.windows += 1;
      if (!group.streams.includes(stream)) group.streams.push(stream);
      continue;
    }
    const { meaning, action, outage } = reasonOf(w.reasonCode);
    groups.set(w.reasonCode, {
      code: w.reasonCode,
      meaning,
      action,
      outage,
      windows: 1,
      streams: [stream],
      latest: w,
    });
  }
  return [...groups.values()].sort((a, b) => b.windows - a.windows || a.code.localeCompare(b.code));
}

/** One line of `status`'s attention list per reason. Pure. */
export function failingReasonLines(reasons: readonly FailingReason[]): string[] {
  return reasons.map(
    (r) =>
      `${r.windows} window(s) of ${r.streams.join(', ')} failing with ${r.code}${r.outage ? ' (the service is down or unreachable)' : ''}`,
  );
}

/** `status`'s section: each reason, its meaning, the latest window's words, and what to do. Pure. */
export function renderFailingReasons(
  reasons: readonly FailingReason[],
  oneLine: (s: string) => string,
): string {
  const out = ['', 'windows failing now, by reason:'];
  if (reasons.length === 0) out.push('  none');
  for (const r of reasons) {
    const w = r.latest;
    const span = `${w.windowStart.toISOString()}/${w.windowEnd.toISOString()}`;
    out.push(
      `  ${r.code}${r.outage ? ' (outage)' : ''}: ${r.windows} window(s) of ${r.streams.join(', ')}: ${r.meaning}`,
      `    latest: ${w.source}/${w.stream} ${span} ${w.kind} ${w.outcome} at ${w.fetchedAt.toISOString()}: ${oneLine(w.detail ?? '-')}`,
      `    what to do: ${r.action}`,
    );
  }
  return `${out.join('\n')}\n`;
}
