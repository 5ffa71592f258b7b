/**
 * One live sync tick of one source (`SYNC_EVERY`): payments from the checkpoint minus `SYNC_LOOKBACK` up to
 * now, the older days that still hold unsettled payments (revisits), then transfers. The checkpoint moves
 * to the end of the contiguous run of completed windows, never past now minus `SETTLE_LAG`, and never
 * backwards. When Redis has lost the checkpoint it is rebuilt from the durable sync log first.
 */
import type { Redis } from 'ioredis';
import type { Settings } from '../config/settings.js';
import { contiguousEnd } from './checkpoint-rebuild.js';
import type { CheckpointStore } from './checkpoints.js';
import type { SyncContext } from './context.js';
import { runTransfers, type TransfersResult } from './transfers-run.js';
import { planTransfersRead } from './transfers-plan.js';
import { runPaymentsWindow, type WindowResult } from './window-run.js';
import {
  dayWindow,
  localDayOf,
  startOfLocalDay,
  windowLabel,
  windowsCovering,
  type Window,
} from './windows.js';
import { describeError, isRetryable } from '../errors.js';
import { loadLatestFindings } from '../probe/findings-store.js';
import { cheaperSyncHints, type SyncHints } from '../probe/hints.js';

export interface TickDeps extends SyncContext {
  settings: Settings;
  checkpoints: CheckpointStore;
  redis: Redis;
  now: () => Date;
}

export interface PaymentsTickReport {
  from: Date;
  windows: WindowResult[];
  revisits: WindowResult[];
  checkpoint: Date | null;
}

const DAY_MS = 86_400_000;
const DEFAULT_START_DAYS = 30;

/** Where live sync starts when there is no checkpoint: SYNC_START, or 30 local days before now. */
export function syncStart(settings: Settings, now: Date): Date {
  const day =
    settings.SYNC_START ??
    localDayOf(new Date(now.getTime() - DEFAULT_START_DAYS * DAY_MS), settings.REPORT_TIMEZONE);
  return startOfLocalDay(day, settings.REPORT_TIMEZONE);
}

/**
 * The checkpoint implied by the sync log's live windows. A window only vouches for what existed when it was read: its end
 * counts at most up to its fetch time minus the settle lag.
 */
export async function rebuildCheckpoint(
  deps: TickDeps,
  stream: 'payments' | 'transfers',
): Promise<Date | null> {
  const rows = await deps.warehouse.completedWindows(deps.source.name, stream);
  // Backfill windows do not count: a backfill never moves the live checkpoint (PRODUCT.md).
  const complete = rows.filter((w) => w.outcome === 'complete' && w.kind !== 'backfill');
  if (complete.length === 0) return null;
  const lag = deps.settings.SETTLE_LAG;
  const capped = complete.map((w) => ({
    windowStart: w.windowStart,
    windowEnd: new Date(Math.min(w.windowEnd.getTime(), w.fetchedAt.getTime() - lag)),
    outcome: w.outcome,
  }));
  const start = new Date(Math.min(...capped.map((w) => w.windowStart.getTime())));
  return contiguousEnd(start, capped);
}

async function currentCheckpoint(deps: TickDeps, stream: 'payments' | 'transfers'): Promise<Date | null> {
  const { source, checkpoints, log } = deps;
  const state = await checkpoints.get(source.name, stream);
  if (state.checkpoint || !(await checkpoints.isMissing(source.name, stream))) return state.checkpoint;
  const rebuilt = await rebuildCheckpoint(deps, stream);
  if (rebuilt) {
    await checkpoints.reset(source.name, stream, rebuilt);
    // info, not a warning: nothing is wrong and nothing is to be done. Redis held no checkpoint (the
    // first live tick after a backfill, or Redis lost its data, which the worker's re-fill reports), and
    // the durable log says where to resume (PRODUCT.md principle 4).
    log.info(
      { source: source.name, stream, checkpoint: rebuilt.toISOString() },
      'checkpoint taken from the sync log (Redis held none)',
    );
  }
  return rebuilt;
}

/**
 * Runs the windows one after the other. A window that fails with what retrying can heal (its retries spent
 * on a 5xx or 429 storm) does not abort the tick: it is reported incomplete, the checkpoint stops before it
 * and the next tick reads it again. What retrying cannot fix (401, 403, 400) stops the tick at once.
 */
async function runWindows(
  deps: TickDeps,
  windows: Window[],
  kind: 'live' | 'revisit',
): Promise<WindowResult[]> {
  const results: WindowResult[] = [];
  for (const window of windows) {
    try {
      results.push(await runPaymentsWindow(deps, window, kind));
    } catch (error) {
      if (!isRetryable(error)) throw error;
      results.push(failedWindow(deps, window, kind, error));
      deps.log.warn(
        { source: deps.source.name, window: windowLabel(window), error: describeError(error) },
        'window failed; the next tick reads it again',
      );
    }
  }
  return results;
}

function failedWindow(deps: TickDeps, window: Window, kind: string, error: unknown): WindowResult {
  return {
    source: deps.source.name,
    stream: 'payments',
    window: windowLabel(window),
    kind,
    pages: 0,
    records: 0,
    rejects: 0,
    reportedTotal: null,
    distinct: 0,
    reads: 0,
    reusedPages: 0,
    outcome: 'incomplete',
    ms: 0,
    detail: `failed: ${describeError(error)}`,
  };
}

async function noteWindows(deps: TickDeps, results: WindowResult[]): Promise<void> {
  for (const r of results) {
    if (r.outcome === 'complete')
      await deps.checkpoints.clearIncomplete(deps.source.name, 'payments', r.window);
    else
      await deps.checkpoints.markIncomplete(deps.source.name, 'payments', r.window, r.detail ?? 'incomplete');
  }
}

/** What the last probe allows to make sync cheaper (never what could lose a record: see probe/hints.ts). */
async function syncHints(deps: TickDeps): Promise<SyncHints> {
  const findings = await loadLatestFindings(
    { redis: deps.redis, pool: deps.pool, prefix: deps.settings.PAYSYNC_QUEUE_PREFIX },
    deps.source.name,
  ).catch(() => null);
  return cheaperSyncHints(findings);
}

/** A larger page when the probe saw the service serve it in full (fewer requests per window). */
async function withPageHint(deps: TickDeps): Promise<TickDeps> {
  const { pageSize } = await syncHints(deps);
  if (!pageSize || pageSize <= deps.options.pageSize) return deps;
  return { ...deps, options: { ...deps.options, pageSize } };
}

/**
 * The unsettled days whose last read is older than REVISIT_EVERY. Ticks come every SYNC_EVERY, but an
 * older day's pending payments do not need reading that often: revisiting each such day at most every
 * REVISIT_EVERY keeps an idle tick's cost to the lookback, whatever the history holds.
 */
async function revisitsDue(deps: TickDeps, windows: Window[], now: Date): Promise<Window[]> {
  if (windows.length === 0) return [];
  const since = new Date(now.getTime() - deps.settings.REVISIT_EVERY);
  const fresh = await deps.warehouse.freshWindows(deps.source.name, 'payments', since, windows);
  return windows.filter((w) => !fresh.has(`${w.start.getTime()}/${w.end.getTime()}`));
}

export async function tickPayments(given: TickDeps): Promise<PaymentsTickReport> {
  const deps = await withPageHint(given);
  const { settings, source } = deps;
  const now = deps.now();
  const zone = settings.REPORT_TIMEZONE;
  const checkpoint = await currentCheckpoint(deps, 'payments');
  const start = syncStart(settings, now);
  const from = checkpoint
    ? new Date(Math.max(checkpoint.getTime() - settings.SYNC_LOOKBACK, start.getTime()))
    : start;
  const windows = await runWindows(deps, windowsCovering(from, now, zone), 'live');
  const covered = new Set(windows.map((w) => w.window));
  const horizon = new Date(now.getTime() - settings.SETTLE_HORIZON);
  const days = await deps.warehouse.nonFinalDays(source.name, 'payments', zone, from, horizon);
  const unsettled = days.map((d) => dayWindow(d, zone)).filter((w) => !covered.has(windowLabel(w)));
  const revisits = await runWindows(deps, await revisitsDue(deps, unsettled, now), 'revisit');
  await noteWindows(deps, [...windows, ...revisits]);
  const advanced = await advanceFrom(deps, windows, now);
  return { from, windows, revisits, checkpoint: advanced ?? checkpoint };
}

async function advanceFrom(deps: TickDeps, windows: WindowResult[], now: Date): Promise<Date | null> {
  if (windows.length === 0) return null;
  const spans = windows.map((w) => {
    const [s, e] = w.window.split('/') as [string, string];
    return { windowStart: new Date(s), windowEnd: new Date(e), outcome: w.outcome };
  });
  const end = contiguousEnd(spans[0]!.windowStart, spans);
  if (!end) return null;
  const capped = new Date(Math.min(end.getTime(), now.getTime() - deps.settings.SETTLE_LAG));
  return deps.checkpoints.advance(deps.source.name, 'payments', capped);
}

/** The organisation a source's transfers belong to: the interface gives none, the source's payments do. */
export async function organisationOf(deps: SyncContext): Promise<string | null> {
  return deps.warehouse.organisationOf(deps.source.name);
}

/**
 * Transfers: the read the list's order allows (transfers-plan.ts), run to a verdict. Whatever the order,
 * after the tick every transfer the service listed before it began is held with the status it showed;
 * only with TRANSFERS_UNORDERED_SCAN_EVERY set may an unordered list's tick skip (null).
 */
export async function tickTransfers(deps: TickDeps): Promise<TransfersResult | null> {
  const { settings, source } = deps;
  const now = deps.now();
  const memory = deps.transferMemory;
  const unsettled = await memory.unsettled(source.name, new Date(now.getTime() - settings.SETTLE_HORIZON));
  const read = planTransfersRead({
    now,
    list: await memory.list(source.name),
    checkpoint: await currentCheckpoint(deps, 'transfers'),
    pageSize: deps.options.pageSize,
    unsettled,
    held: await memory.held(source.name),
    lookbackMs: settings.SYNC_LOOKBACK,
    fullScanEveryMs: settings.TRANSFERS_FULL_SCAN_EVERY,
    unorderedScanEveryMs: settings.TRANSFERS_UNORDERED_SCAN_EVERY,
  });
  deps.log.debug({ source: source.name, read }, 'transfers read planned');
  if (read.mode === 'skip') return null;
  const result = await runTransfers(deps, {
    mode: read.mode,
    stopBefore: read.mode === 'newest-first' ? read.stopBefore : null,
    organizationId: await organisationOf(deps),
    ...(read.mode === 'tail'
      ? { startPage: read.startPage, skipped: read.skipped, mustSee: unsettled.ids }
      : {}),
  });
  if (result.outcome === 'complete')
    await deps.checkpoints.advance(source.name, 'transfers', new Date(now.getTime() - settings.SETTLE_LAG));
  return result;
}
