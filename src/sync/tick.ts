/**
 * One live sync tick of one source (`SYNC_EVERY`): payments from the checkpoint minus `SYNC_LOOKBACK` up to
 * now, the older days that still hold unsettled payments (revisits), then transfers. The checkpoint moves
 * to the end of the contiguous run of completed windows, never past now minus `SETTLE_LAG`, and never
 * backwards. When Redis has lost the checkpoint it is rebuilt from the durable sync log first.
 */
import type { Redis } from 'ioredis';
import type { Settings } from '../config/settings.js';
import { completedWindows, nonFinalDays } from '../warehouse/sync-log.js';
import { contiguousEnd } from './checkpoint-rebuild.js';
import type { CheckpointStore } from './checkpoints.js';
import type { SyncContext } from './context.js';
import { runTransfers, type TransfersResult } from './transfers-run.js';
import { TransferStateStore } from './transfer-state.js';
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
  const rows = await completedWindows(deps.pool, deps.source.name, stream);
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
    log.warn(
      { source: source.name, stream, checkpoint: rebuilt.toISOString() },
      'checkpoint rebuilt from the sync log',
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
  const { rows } = await deps.pool.query<{ window_start: Date; window_end: Date }>(
    `SELECT window_start, window_end FROM reporting.sync_windows
      WHERE source = $1 AND stream = 'payments' AND outcome = 'complete' AND fetched_at > $2
        AND window_start = ANY($3::timestamptz[])`,
    [deps.source.name, new Date(now.getTime() - deps.settings.REVISIT_EVERY), windows.map((w) => w.start)],
  );
  const fresh = new Set(rows.map((r) => `${r.window_start.getTime()}/${r.window_end.getTime()}`));
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
  const days = await nonFinalDays(deps.pool, source.name, 'payments', zone, from, horizon);
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
export async function organisationOf(deps: TickDeps): Promise<string | null> {
  const { rows } = await deps.pool.query<{ organization_id: string }>(
    `SELECT organization_id FROM reporting.payments WHERE source = $1 GROUP BY organization_id ORDER BY count(*) DESC LIMIT 1`,
    [deps.source.name],
  );
  return rows[0]?.organization_id ?? null;
}

async function oldestUnsettledTransfer(deps: TickDeps, horizon: Date): Promise<Date | null> {
  const { rows } = await deps.pool.query<{ oldest: Date | null }>(
    `SELECT min(created_at) AS oldest FROM reporting.transfers
      WHERE source = $1 AND status NOT IN ('COMPLETE', 'FAILED') AND created_at >= $2`,
    [deps.source.name, horizon],
  );
  return rows[0]?.oldest ? new Date(rows[0].oldest) : null;
}

/** Transfers: a newest-first early-stopping read when the list is known to be newest-first, else a full scan at its own pace. */
export async function tickTransfers(deps: TickDeps): Promise<TransfersResult | null> {
  const { settings, source } = deps;
  const now = deps.now();
  const store = new TransferStateStore(deps.redis, settings.PAYSYNC_QUEUE_PREFIX);
  const findings = await store.get(source.name);
  const checkpoint = await currentCheckpoint(deps, 'transfers');
  const fullDue =
    !findings.lastFullScanAt ||
    now.getTime() - findings.lastFullScanAt.getTime() >= settings.TRANSFERS_FULL_SCAN_EVERY;
  // The transfer list's order, as the last read saw it, or else as the probe found it (each read checks it).
  const newestFirst = findings.newestFirst ?? (await syncHints(deps)).transfersNewestFirst;
  if (!fullDue && !newestFirst) return null; // not newest-first: only periodic full scans are safe
  let stopBefore: Date | null = null;
  if (!fullDue && checkpoint) {
    const unsettled = await oldestUnsettledTransfer(deps, new Date(now.getTime() - settings.SETTLE_HORIZON));
    const lookback = checkpoint.getTime() - settings.SYNC_LOOKBACK;
    stopBefore = new Date(Math.min(lookback, unsettled?.getTime() ?? lookback));
  }
  const mode = stopBefore ? 'newest-first' : 'full';
  const result = await runTransfers(deps, { mode, stopBefore, organizationId: await organisationOf(deps) });
  await store.recordScan(source.name, !result.stoppedEarly, result.newestFirst, now);
  if (result.outcome === 'complete') {
    await deps.checkpoints.advance(source.name, 'transfers', new Date(now.getTime() - settings.SETTLE_LAG));
    await deps.checkpoints.clearIncomplete(source.name, 'transfers', 'scan');
  } else {
    await deps.checkpoints.markIncomplete(source.name, 'transfers', 'scan', result.detail ?? 'incomplete');
  }
  return result;
}
