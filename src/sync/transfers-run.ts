/**
 * Runs one transfers read to a verdict (the list has no date filter: it is read by position), as gather
 * and judge, then act. The reads, each judged once, are in transfers-passes.ts:
 *
 * - `newest-first`: from page 0, stopping at the first page past `stopBefore` while the order holds; if
 *   the order breaks the read goes to the end and is judged as a full scan.
 * - `tail` (oldest-first): from `startPage` to the end; complete only when decideTail finds the proof,
 *   else a full scan in the same run.
 * - `full`: from page 0 to the end, read once more on a shortfall (decideScan).
 *
 * Every read remembers the position of each id (transfer-state.ts), and the order it saw. Then the acts:
 * what the list is remembered as, the verdict in the sync log after the rows are committed, and the
 * incomplete mark `status` shows, set by an incomplete scan and cleared by the next read that proves the
 * whole list is held (a tick's, a backfill's, a retry's).
 */
import { performance } from 'node:perf_hooks';
import { clockOf, type SyncContext, type WindowReport } from './context.js';
import { DistinctIds } from './read-verdict.js';
import { recordFailedRun } from './window-failure.js';
import { blocksDay } from './window-reasons.js';
import type { ListOrder, TransferList } from './transfer-state.js';
import {
  readNewestFirst,
  readTail,
  scanInFull,
  type Remember,
  type RunTally,
  type ShortcutOutcome,
  type TransfersPlan,
  type Verdict,
} from './transfers-passes.js';

export interface TransfersResult extends WindowReport {
  /** The order the read showed (the ordering finding). */
  order: ListOrder;
  /** Whether every item read was in newest-first order. */
  newestFirst: boolean;
  stoppedEarly: boolean;
  /** The read that decided the verdict: a full scan when a shortcut fell back. */
  mode: 'newest-first' | 'tail' | 'full';
  /** Why a shortcut fell back to a full scan, if it did. */
  fellBack: string | null;
  detail: string | null;
}

/**
 * Gather and judge (transfers-passes.ts): the shortcut read the plan chose, if any, then a full scan
 * unless it proved the list whole. Then act: remember what the reads learnt of the list, write the
 * verdict to the sync log, set or clear the incomplete mark.
 */
export async function runTransfers(ctx: SyncContext, plan: TransfersPlan): Promise<TransfersResult> {
  const startedMs = performance.now();
  const at = clockOf(ctx);
  const run = { recorded: false };
  try {
    return await runToVerdict(ctx, plan, at, startedMs, run);
  } catch (error) {
    // whatever ended the read, the scan gets its row, failed with the reason (window-failure.ts)
    if (!run.recorded)
      await recordFailedRun(ctx, {
        stream: 'transfers',
        window: { start: new Date(0), end: at },
        kind: 'scan',
        fetchedAt: at,
        ms: performance.now() - startedMs,
        error,
      });
    throw error;
  }
}

async function runToVerdict(
  ctx: SyncContext,
  plan: TransfersPlan,
  at: Date,
  startedMs: number,
  run: { recorded: boolean },
): Promise<TransfersResult> {
  const t: RunTally = {
    at,
    ids: new DistinctIds(),
    records: 0,
    rejects: 0,
    pages: 0,
    reads: 0,
    maxTotal: null,
    // ids the rejects hold as listed in contradicting copies: a read of the whole list judges every copy
    watch: new Set((await ctx.warehouse.contradictedIds?.(ctx.source.name, 'transfers')) ?? []),
  };
  const shortcut: ShortcutOutcome | null =
    plan.mode === 'tail'
      ? await readTail(ctx, plan, t)
      : plan.mode === 'newest-first'
        ? await readNewestFirst(ctx, plan, t)
        : null;
  let verdict: Verdict;
  if (shortcut && 'proven' in shortcut) verdict = shortcut.proven;
  else if (shortcut && 'fellBack' in shortcut) {
    const why = shortcut.fellBack;
    ctx.log.info({ source: ctx.source.name, mode: plan.mode, why }, 'transfers read unproven; full scan');
    verdict = { ...(await scanInFull(ctx, plan, t, null)), fellBack: why };
  } else verdict = await scanInFull(ctx, plan, t, shortcut?.ranToEnd ?? null);
  if (verdict.remember) await remember(ctx, verdict.remember, t.at);
  return finish(ctx, t, verdict, performance.now() - startedMs, run);
}

/** What the list is remembered as: a full scan's order and geometry, or a proven tail's list as it was. */
async function remember(ctx: SyncContext, what: Remember, at: Date): Promise<void> {
  const { source, transferMemory: memory } = ctx;
  if (what.kind === 'tail') {
    if (what.list) await memory.saveList(source.name, { ...what.list, lastFullScanAt: null }, at);
    return;
  }
  const list: TransferList = {
    order: what.order,
    pageSize: ctx.options.pageSize,
    servedSize: what.firstRead.servedSize ?? ctx.options.pageSize,
    anonymous: what.scan.anonymous,
    lastFullScanAt: what.complete ? at : null,
  };
  if (what.complete) await memory.forgetUnseen(source.name, at); // ids the whole list no longer shows
  await memory.saveList(source.name, list, at);
}

async function finish(
  ctx: SyncContext,
  t: RunTally,
  v: Verdict,
  ms: number,
  run: { recorded: boolean },
): Promise<TransfersResult> {
  const at = t.at;
  const outcome = v.complete ? 'complete' : 'incomplete';
  // a scan falls short only of the service's total (decideScan)
  const reasonCode = v.complete ? null : (v.reason ?? 'TOTAL_SHORT');
  const duplicates = v.duplicates ?? 0;
  const result: TransfersResult = {
    source: ctx.source.name,
    stream: 'transfers',
    window: `${v.windowStart.toISOString()}/${at.toISOString()}`,
    kind: v.mode === 'full' ? 'scan' : v.mode,
    pages: t.pages,
    records: t.records,
    rejects: t.rejects,
    reportedTotal: t.maxTotal,
    distinct: t.ids.size,
    reads: t.reads,
    outcome,
    reasonCode,
    ms: Math.round(ms),
    order: v.order,
    newestFirst: v.order === 'newest-first',
    stoppedEarly: v.stoppedEarly,
    mode: v.mode,
    fellBack: v.fellBack,
    detail: v.detail,
  };
  await ctx.warehouse.recordWindow({
    source: ctx.source.name,
    stream: 'transfers',
    windowStart: v.windowStart,
    windowEnd: at,
    kind: 'scan',
    fetchedAt: at,
    records: t.records,
    rejects: t.rejects,
    reportedTotal: t.maxTotal,
    pages: t.pages,
    outcome,
    detail: v.detail,
    reasonCode,
    blocksDay: blocksDay(reasonCode),
    duplicates,
    anomalies: [...(t.anomalies ?? []), ...(duplicates > 0 ? (['DUPLICATES_LISTED'] as const) : [])].sort(),
  });
  run.recorded = true;
  await noteMark(ctx, v);
  ctx.log[v.complete ? 'info' : 'warn'](
    { ...result },
    v.complete ? 'transfers synced' : 'transfers scan incomplete',
  );
  ctx.onWindow?.(result);
  return result;
}

/** The `scan` mark `status` shows: set by an incomplete read, cleared by any read proving the list whole. */
async function noteMark(ctx: SyncContext, v: Verdict): Promise<void> {
  const markers = ctx.checkpoints;
  if (!markers) return;
  if (!v.complete)
    await markers.markIncomplete(ctx.source.name, 'transfers', 'scan', v.detail ?? 'incomplete');
  else if (v.whole) await markers.clearIncomplete(ctx.source.name, 'transfers', 'scan');
}
