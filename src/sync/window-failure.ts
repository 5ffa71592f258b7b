/**
 * The row of a window run that did not reach a verdict: whatever ended it (an upstream error past its
 * retries, a paging failure, a refused write, a bug, or a circuit that let no request through), the sync
 * log gets the window `failed` with its reason code (window-reasons.ts) and the error's words, and
 * `onWindow` hears of it (metrics). Principle 8: no window ends without its row.
 */
import { describeError } from '../errors.js';
import { clockOf, type SyncContext, type WindowReport } from './context.js';
import { blocksDay, reasonOfError, type ReasonCode } from './window-reasons.js';
import { windowLabel, type Window } from './windows.js';

export interface FailedRun {
  stream: 'payments' | 'transfers';
  window: Window;
  kind: 'live' | 'backfill' | 'revisit' | 'scan';
  /** When the run began (the sync log's fetched_at); default: now on the sync clock. */
  fetchedAt?: Date;
  ms?: number;
  /** The error that ended it; or, for a run that never started (CIRCUIT_OPEN), `reason` and `detail`. */
  error?: unknown;
  reason?: ReasonCode;
  detail?: string;
}

export interface FailedReport extends WindowReport {
  outcome: 'failed';
  reasonCode: ReasonCode;
  detail: string;
}

/** The failure's reason and words, from the error (or as given). Pure. */
export function failureOf(run: Pick<FailedRun, 'error' | 'reason' | 'detail'>): {
  reason: ReasonCode;
  detail: string;
} {
  const reason = run.reason ?? reasonOfError(run.error);
  const detail = run.detail ?? (run.error === undefined ? reason : describeError(run.error));
  return { reason, detail };
}

/**
 * Writes the failed row (the write's own failure is logged, never thrown over the run's error: the
 * caller rethrows that one) and reports the run to `onWindow`.
 */
export async function recordFailedRun(ctx: SyncContext, run: FailedRun): Promise<FailedReport> {
  const { reason, detail } = failureOf(run);
  const fetchedAt = run.fetchedAt ?? clockOf(ctx);
  const report: FailedReport = {
    source: ctx.source.name,
    stream: run.stream,
    window: windowLabel(run.window),
    kind: run.kind,
    pages: 0,
    records: 0,
    rejects: 0,
    reportedTotal: null,
    distinct: 0,
    reads: 0,
    outcome: 'failed',
    reasonCode: reason,
    ms: Math.round(run.ms ?? 0),
    detail,
  };
  try {
    await ctx.warehouse.recordWindow({
      source: ctx.source.name,
      stream: run.stream,
      windowStart: run.window.start,
      windowEnd: run.window.end,
      kind: run.kind,
      fetchedAt,
      records: 0,
      rejects: 0,
      reportedTotal: null,
      pages: 0,
      outcome: 'failed',
      detail,
      reasonCode: reason,
      blocksDay: blocksDay(reason),
    });
  } catch (writeError) {
    ctx.log.error(
      { source: ctx.source.name, window: report.window, reason, error: describeError(writeError) },
      'could not record the failed window in the sync log (PostgreSQL refused or is unreachable)',
    );
  }
  ctx.log.warn({ ...report }, 'window failed');
  ctx.onWindow?.(report);
  return report;
}
