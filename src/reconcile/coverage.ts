/**
 * Whether sync covers a local day: for every source and stream, the union of its complete windows must
 * span the whole day. A window vouches only for what existed when it was read, so it reaches at most its
 * fetch time minus SETTLE_LAG (records can appear late); a backfill of today ends at midnight, but covers
 * nothing after the moment it ran. Transfers are scanned whole: a scan's window runs from the oldest
 * transfer it vouches for to its start.
 */
import type { Pool, PoolClient } from 'pg';
import { PaysyncError } from '../errors.js';
import type { Window } from '../sync/windows.js';

export interface Span {
  start: number;
  end: number;
}

/** The first part of [from, to) no span covers, or null when the spans cover it all. Pure. */
export function firstGap(spans: readonly Span[], from: number, to: number): Span | null {
  let reached = from;
  for (const s of [...spans].sort((a, b) => a.start - b.start)) {
    if (s.start > reached) break;
    reached = Math.max(reached, s.end);
    if (reached >= to) return null;
  }
  return reached >= to ? null : { start: reached, end: to };
}

export interface StreamCoverage {
  source: string;
  stream: 'payments' | 'transfers';
  /** The first uncovered part of the day, or null when the day is covered. */
  gap: { from: Date; to: Date } | null;
}

/** A complete window of the sync log, as far as it vouches (end capped at its fetch time minus SETTLE_LAG). */
export interface CoveringWindow {
  source: string;
  stream: string;
  start: number;
  end: number;
}

/**
 * Every complete window that vouches for part of [from, to): one query for any number of days (the status
 * page's calendar asks for 35 at once). `window_end > from` repeats what the capped end implies, so the
 * (source, stream, window_end) index can serve the range.
 */
export async function coveringWindows(
  db: Pool | PoolClient,
  sources: readonly string[],
  range: Window,
  settleLagMs: number,
): Promise<CoveringWindow[]> {
  // Windows sharing a start count once, with their furthest end: the union is the same, and a year of
  // transfers scans (one row per tick, all starting at the same instant) comes back as one row.
  const { rows } = await db.query<{ source: string; stream: string; s: Date; e: Date }>(
    `SELECT source, stream, window_start AS s,
            max(least(window_end, fetched_at - $4 * interval '1 millisecond')) AS e
       FROM reporting.sync_windows
      WHERE source = ANY($1::text[]) AND outcome = 'complete' AND window_end > $2
        AND window_start < $3 AND least(window_end, fetched_at - $4 * interval '1 millisecond') > $2
      GROUP BY source, stream, window_start`,
    [sources, range.start, range.end, settleLagMs],
  );
  return rows.map((r) => ({ source: r.source, stream: r.stream, start: r.s.getTime(), end: r.e.getTime() }));
}

/** Per source and stream, the first part of `day` these windows leave uncovered. Pure. */
export function coverageOf(
  windows: readonly CoveringWindow[],
  sources: readonly string[],
  day: Window,
): StreamCoverage[] {
  const out: StreamCoverage[] = [];
  for (const source of sources) {
    for (const stream of ['payments', 'transfers'] as const) {
      const spans = windows.filter((w) => w.source === source && w.stream === stream);
      const gap = firstGap(spans, day.start.getTime(), day.end.getTime());
      out.push({ source, stream, gap: gap && { from: new Date(gap.start), to: new Date(gap.end) } });
    }
  }
  return out;
}

export async function dayCoverage(
  db: Pool | PoolClient,
  sources: readonly string[],
  day: Window,
  settleLagMs: number,
): Promise<StreamCoverage[]> {
  return coverageOf(await coveringWindows(db, sources, day, settleLagMs), sources, day);
}

/** `export --day D` of a day sync does not cover yet, without --allow-incomplete. Exit 1. */
export class DayNotCoveredError extends PaysyncError {
  constructor(message: string) {
    super('DAY_NOT_COVERED', message);
  }
}

/** One line per uncovered source and stream. */
export function describeGaps(coverage: readonly StreamCoverage[]): string {
  return coverage
    .filter((c) => c.gap)
    .map((c) => `${c.source}/${c.stream} from ${c.gap!.from.toISOString()} to ${c.gap!.to.toISOString()}`)
    .join('; ');
}
