/**
 * One live sync tick of one source (`SYNC_EVERY`), read as gather, decide, act:
 *
 * - payments: gather the checkpoint (rebuilt from the durable sync log when Redis lost it) and the
 *   probe's hints; decide the live read (checkpoint minus `SYNC_LOOKBACK` up to now, tick-plan.ts); read
 *   it. Then gather the older days still holding unsettled payments (after the live read, which may have
 *   settled some), decide which are due a revisit, read them. Last, act on the verdicts: incomplete
 *   marks, and the checkpoint moved to the end of the contiguous run of completed live windows, never
 *   past now minus `SETTLE_LAG` and never backwards.
 * - transfers: gather what the sync remembers of the list (tick-evidence.ts), decide the read its order
 *   allows (transfers-plan.ts), run it to a verdict (transfers-run.ts), move the checkpoint.
 *
 * The decisions are pure functions of what was gathered, each called once.
 */
import { CircuitOpenError, describeError, isRetryable } from '../errors.js';
import type { TickDeps } from './context.js';
import { readLookback } from './lookback.js';
import { gatherPaymentsStart, gatherTransfers, gatherUnsettledDays } from './tick-evidence.js';
import { liveCheckpoint, planLiveRead, revisitsDue } from './tick-plan.js';
import { planTransfersRead } from './transfers-plan.js';
import { runTransfers, type TransfersResult } from './transfers-run.js';
import { runPaymentsWindow, type WindowResult } from './window-run.js';
import { windowLabel, type Window } from './windows.js';
import { failureOf } from './window-failure.js';

export interface PaymentsTickReport {
  from: Date;
  windows: WindowResult[];
  revisits: WindowResult[];
  checkpoint: Date | null;
}

export async function tickPayments(given: TickDeps): Promise<PaymentsTickReport> {
  const { settings } = given;
  const { hints, now, checkpoint } = await gatherPaymentsStart(given);
  const live = planLiveRead({ settings, now, checkpoint, hints, pageSize: given.options.pageSize });
  const deps = withPageSize(given, live.pageSize);
  const windows = await readLive(deps, live.windows, checkpoint, hints.statusFilter === true);

  const { days, fresh } = await gatherUnsettledDays(deps, live.from, now);
  const covered = new Set(windows.map((w) => w.window));
  const due = revisitsDue({ days, zone: settings.REPORT_TIMEZONE, covered, fresh });
  const revisits = await runWindows(deps, due, 'revisit');

  await noteWindows(deps, [...windows, ...revisits]);
  const end = liveCheckpoint(windows, now, settings.SETTLE_LAG);
  const advanced = end ? await deps.checkpoints.advance(deps.source.name, 'payments', end) : null;
  return { from: live.from, windows, revisits, checkpoint: advanced ?? checkpoint };
}

/**
 * Transfers: the read the list's order allows, run to a verdict. Whatever the order, after the tick every
 * transfer the service listed before it began is held with the status it showed; only with
 * TRANSFERS_UNORDERED_SCAN_EVERY set may an unordered list's tick skip (null).
 */
export async function tickTransfers(deps: TickDeps): Promise<TransfersResult | null> {
  const { settings, source } = deps;
  const seen = await gatherTransfers(deps);
  const read = planTransfersRead({
    now: seen.now,
    list: seen.list,
    checkpoint: seen.checkpoint,
    pageSize: deps.options.pageSize,
    unsettled: seen.unsettled,
    held: seen.held,
    lookbackMs: settings.SYNC_LOOKBACK,
    fullScanEveryMs: settings.TRANSFERS_FULL_SCAN_EVERY,
    unorderedScanEveryMs: settings.TRANSFERS_UNORDERED_SCAN_EVERY,
  });
  deps.log.debug({ source: source.name, read }, 'transfers read planned');
  if (read.mode === 'skip') return null;
  const result = await runTransfers(deps, {
    mode: read.mode,
    stopBefore: read.mode === 'newest-first' ? read.stopBefore : null,
    organizationId: seen.organizationId,
    ...(read.mode === 'tail'
      ? { startPage: read.startPage, skipped: read.skipped, mustSee: seen.unsettled.ids }
      : {}),
  });
  if (result.outcome === 'complete') {
    const end = new Date(seen.now.getTime() - settings.SETTLE_LAG);
    await deps.checkpoints.advance(source.name, 'transfers', end);
  }
  return result;
}

/**
 * The live read: the whole days before the checkpoint (read completely by earlier ticks) only as far as
 * the evidence requires (lookback.ts), the rest in full. Results in window order (the checkpoint moves
 * over their contiguous complete run).
 */
async function readLive(
  deps: TickDeps,
  windows: Window[],
  checkpoint: Date | null,
  statusFilter: boolean,
): Promise<WindowResult[]> {
  const settled =
    checkpoint && deps.options.lookbackByEvidence
      ? windows.filter((w) => w.end.getTime() <= checkpoint.getTime())
      : [];
  const lookback = await readLookback(deps, settled, statusFilter);
  const rest = await runWindows(
    deps,
    windows.filter((w) => !lookback.settled.has(windowLabel(w))),
    'live',
  );
  const read = new Map(rest.map((r) => [r.window, r]));
  return windows.map(
    (w) => (lookback.settled.get(windowLabel(w)) ?? read.get(windowLabel(w))) as WindowResult,
  );
}

function withPageSize(deps: TickDeps, pageSize: number): TickDeps {
  return pageSize === deps.options.pageSize ? deps : { ...deps, options: { ...deps.options, pageSize } };
}

/**
 * Runs the windows one after the other. A window that fails with what retrying can heal (its retries spent
 * on a 5xx or 429 storm) does not abort the tick: it is reported failed (its sync-log row, with the
 * reason, is written by runPaymentsWindow), the checkpoint stops before it and the next tick reads it
 * again. What retrying cannot fix (401, 403, 400) stops the tick at once, and so does an open circuit
 * (the service is down: src/sync/circuit.ts).
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
      // an open circuit ends the tick: the windows after this one would not be sent either
      if (!isRetryable(error) || error instanceof CircuitOpenError) throw error;
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
    duplicates: 0,
    anomalies: [],
    outcome: 'failed',
    reasonCode: failureOf({ error }).reason,
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
