/**
 * The live tick's decisions, as pure functions of what it gathered (tick-evidence.ts): where the live read
 * starts and at which page size, which older days are due for a revisit, and where the checkpoint moves.
 * No I/O: the tick (tick.ts) gathers, calls these, then acts.
 */
import type { Settings } from '../config/settings.js';
import type { SyncHints } from '../probe/hints.js';
import { contiguousEnd } from './checkpoint-rebuild.js';
import type { CompletedWindow } from './ports.js';
import {
  dayWindow,
  localDayOf,
  startOfLocalDay,
  windowLabel,
  windowsCovering,
  type Window,
} from './windows.js';

const DAY_MS = 86_400_000;
const DEFAULT_START_DAYS = 30;

/** Where live sync starts when there is no checkpoint: SYNC_START, or 30 local days before now. */
export function syncStart(settings: Pick<Settings, 'SYNC_START' | 'REPORT_TIMEZONE'>, now: Date): Date {
  const day =
    settings.SYNC_START ??
    localDayOf(new Date(now.getTime() - DEFAULT_START_DAYS * DAY_MS), settings.REPORT_TIMEZONE);
  return startOfLocalDay(day, settings.REPORT_TIMEZONE);
}

/**
 * The checkpoint implied by the sync log's live windows. A window only vouches for what existed when it
 * was read: its end counts at most up to its fetch time minus the settle lag. Backfill windows do not
 * count: a backfill never moves the live checkpoint (PRODUCT.md).
 */
export function checkpointFromLog(rows: readonly CompletedWindow[], settleLagMs: number): Date | null {
  const complete = rows.filter((w) => w.outcome === 'complete' && w.kind !== 'backfill');
  if (complete.length === 0) return null;
  const capped = complete.map((w) => ({
    windowStart: w.windowStart,
    windowEnd: new Date(Math.min(w.windowEnd.getTime(), w.fetchedAt.getTime() - settleLagMs)),
    outcome: w.outcome,
  }));
  const start = new Date(Math.min(...capped.map((w) => w.windowStart.getTime())));
  return contiguousEnd(start, capped);
}

export interface LiveRead {
  /** The live read covers [from, now): the checkpoint minus SYNC_LOOKBACK, never before the sync start. */
  from: Date;
  windows: Window[];
  /** A larger page when the probe saw the service serve it in full (fewer requests per window). */
  pageSize: number;
}

export function planLiveRead(i: {
  settings: Settings;
  now: Date;
  checkpoint: Date | null;
  hints: SyncHints;
  pageSize: number;
}): LiveRead {
  const { settings, now, checkpoint } = i;
  const start = syncStart(settings, now);
  const from = checkpoint
    ? new Date(Math.max(checkpoint.getTime() - settings.SYNC_LOOKBACK, start.getTime()))
    : start;
  const hinted = i.hints.pageSize;
  return {
    from,
    windows: windowsCovering(from, now, settings.REPORT_TIMEZONE),
    pageSize: hinted && hinted > i.pageSize ? hinted : i.pageSize,
  };
}

/**
 * The older days to read again: each day still holding unsettled payments, unless the live read covered
 * it or it was read completely since REVISIT_EVERY ago (`fresh`, as `startMs/endMs`). Ticks come every
 * SYNC_EVERY, but an older day's pending payments do not need reading that often: revisiting each such
 * day at most every REVISIT_EVERY keeps an idle tick's cost to the lookback, whatever the history holds.
 */
export function revisitsDue(i: {
  days: readonly string[];
  zone: string;
  covered: ReadonlySet<string>;
  fresh: ReadonlySet<string>;
}): Window[] {
  return i.days
    .map((d) => dayWindow(d, i.zone))
    .filter((w) => !i.covered.has(windowLabel(w)))
    .filter((w) => !i.fresh.has(`${w.start.getTime()}/${w.end.getTime()}`));
}

/**
 * Where the live read moves the checkpoint: the end of the contiguous run of complete windows from the
 * first one, never past now minus SETTLE_LAG; null when the first window did not complete.
 */
export function liveCheckpoint(
  windows: ReadonlyArray<{ window: string; outcome: string }>,
  now: Date,
  settleLagMs: number,
): Date | null {
  if (windows.length === 0) return null;
  const spans = windows.map((w) => {
    const [s, e] = w.window.split('/') as [string, string];
    return { windowStart: new Date(s), windowEnd: new Date(e), outcome: w.outcome };
  });
  const end = contiguousEnd(spans[0]!.windowStart, spans);
  if (!end) return null;
  return new Date(Math.min(end.getTime(), now.getTime() - settleLagMs));
}
