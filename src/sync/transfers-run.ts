/**
 * Runs one read of the transfer list to a verdict (the list has no date filter: it is read by position).
 *
 * - `newest-first`: from page 0, stopping at the first page past `stopBefore` while the order holds; if
 *   the order breaks the read goes to the end and is judged as a full scan.
 * - `tail` (oldest-first): from `startPage` to the end; complete only when decideTail finds the proof,
 *   else a full scan in the same run.
 * - `full`: from page 0 to the end, read once more on a shortfall (decideScan).
 * Every read remembers the position of each id (transfer-state.ts), and the order it saw. The verdict
 * goes to the sync log after the rows are committed; an incomplete scan is marked for `status`, and the
 * mark is cleared by the next read that proves the whole list is held (a tick's, a backfill's, a retry's).
 */
import { performance } from 'node:perf_hooks';
import { clockOf, type SyncContext, type WindowReport } from './context.js';
import { DistinctIds, decideNewestFirst, decideScan, decideTail, orderOf } from './read-verdict.js';
import type { ListOrder, TransferList, TransferMemory } from './transfer-state.js';
import { readTransferList, type TransferReadOutcome } from './transfers-read.js';

export interface TransfersPlan {
  mode: 'newest-first' | 'full' | 'tail';
  /** Newest-first runs stop once a page reaches a transfer created before this instant. */
  stopBefore: Date | null;
  organizationId: string | null;
  /** Tail runs: the first page, and the records taken to be on the pages before it. */
  startPage?: number;
  skipped?: number;
  /** Tail runs: the unsettled transfers held, each of which the tail must see again. */
  mustSee?: readonly string[];
}

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

/** What the runs accumulate over their reads. */
interface RunTally {
  ids: DistinctIds;
  records: number;
  rejects: number;
  pages: number;
  reads: number;
  maxTotal: number | null;
}

function add(t: RunTally, read: TransferReadOutcome): void {
  t.ids.merge(read.ids);
  t.records += read.records;
  t.rejects += read.rejects;
  t.pages += read.pages;
  t.reads += 1;
  if (read.maxTotal !== null) t.maxTotal = Math.max(t.maxTotal ?? 0, read.maxTotal);
}

interface Verdict {
  mode: TransfersResult['mode'];
  complete: boolean;
  /** The read proved every transfer of the list is held (clears an incomplete mark). */
  whole: boolean;
  stoppedEarly: boolean;
  order: ListOrder;
  detail: string | null;
  fellBack: string | null;
  windowStart: Date;
}

export async function runTransfers(ctx: SyncContext, plan: TransfersPlan): Promise<TransfersResult> {
  const startedMs = performance.now();
  const at = clockOf(ctx);
  const memory = ctx.transferMemory;
  const t: RunTally = { ids: new DistinctIds(), records: 0, rejects: 0, pages: 0, reads: 0, maxTotal: null };
  let verdict: Verdict;
  if (plan.mode === 'tail') verdict = await runTail(ctx, memory, plan, t, at);
  else if (plan.mode === 'newest-first') verdict = await runNewestFirst(ctx, memory, plan, t, at);
  else verdict = await runFull(ctx, memory, plan, t, at, null);
  return finish(ctx, t, verdict, at, performance.now() - startedMs);
}

async function runNewestFirst(
  ctx: SyncContext,
  memory: TransferMemory,
  plan: TransfersPlan,
  t: RunTally,
  at: Date,
): Promise<Verdict> {
  const spec = {
    startPage: 0,
    skipped: 0,
    stopBefore: plan.stopBefore,
    organizationId: plan.organizationId,
    at,
  };
  const read = await readTransferList(ctx, memory, spec);
  add(t, read);
  if (read.summary !== null) return runFull(ctx, memory, plan, t, at, read); // the order broke: read to the end
  const list = await memory.list(ctx.source.name);
  const held = (await memory.held(ctx.source.name)) + (list?.anonymous ?? 0);
  const verdict = decideNewestFirst({ held, maxTotal: t.maxTotal });
  if (verdict.verdict === 'full-scan') return fallBack(ctx, memory, plan, t, at, verdict.why);
  return {
    mode: 'newest-first',
    complete: true,
    whole: t.maxTotal !== null,
    stoppedEarly: true,
    order: 'newest-first',
    detail: null,
    fellBack: null,
    windowStart: plan.stopBefore ?? new Date(0),
  };
}

async function runTail(
  ctx: SyncContext,
  memory: TransferMemory,
  plan: TransfersPlan,
  t: RunTally,
  at: Date,
): Promise<Verdict> {
  const list = await memory.list(ctx.source.name);
  const startPage = plan.startPage ?? 0;
  const spec = {
    startPage,
    skipped: plan.skipped ?? 0,
    stopBefore: null,
    organizationId: plan.organizationId,
    at,
  };
  const read = await readTransferList(ctx, memory, spec);
  add(t, read);
  const mustSee = plan.mustSee ?? [];
  const tail = decideTail({
    oldestFirst: read.order.ascending,
    firstPageCount: read.firstPage.count,
    firstPageKnown: read.firstPage.known,
    geometryChanged: read.servedSize !== null && read.servedSize !== list?.servedSize,
    unsettledMissed: mustSee.filter((id) => !read.ids.ids.has(id)).length,
    held: (await memory.held(ctx.source.name)) + (list?.anonymous ?? 0),
    maxTotal: read.maxTotal,
  });
  if (tail.verdict === 'full-scan') return fallBack(ctx, memory, plan, t, at, tail.why);
  if (list) await memory.saveList(ctx.source.name, { ...list, lastFullScanAt: null }, at);
  return {
    mode: 'tail',
    complete: true,
    whole: true,
    stoppedEarly: false,
    order: 'oldest-first',
    detail: null,
    fellBack: null,
    windowStart: new Date(0),
  };
}

/** A shortcut that could not prove the list whole: a full scan in the same run. */
async function fallBack(
  ctx: SyncContext,
  memory: TransferMemory,
  plan: TransfersPlan,
  t: RunTally,
  at: Date,
  why: string,
): Promise<Verdict> {
  ctx.log.info({ source: ctx.source.name, mode: plan.mode, why }, 'transfers read unproven; full scan');
  const full = await runFull(ctx, memory, plan, t, at, null);
  return { ...full, fellBack: why };
}

/** A full scan; `first` is a read from page 0 to the end already made (a newest-first read that ran on). */
async function runFull(
  ctx: SyncContext,
  memory: TransferMemory,
  plan: TransfersPlan,
  t: RunTally,
  at: Date,
  first: TransferReadOutcome | null,
): Promise<Verdict> {
  const scan = new DistinctIds();
  let read = first;
  let reads = 0;
  let firstRead: TransferReadOutcome | null = first;
  for (;;) {
    if (read === null) {
      const spec = { startPage: 0, skipped: 0, stopBefore: null, organizationId: plan.organizationId, at };
      read = await readTransferList(ctx, memory, spec);
      add(t, read);
    }
    firstRead ??= read;
    scan.merge(read.ids);
    reads += 1;
    const verdict = decideScan({ reads, distinct: scan.size, maxTotal: t.maxTotal });
    if (verdict.verdict === 're-read') {
      read = null;
      continue;
    }
    const complete = verdict.verdict === 'complete';
    const order = orderOf(firstRead.order);
    await rememberScan(ctx, memory, firstRead, scan, order, complete, at);
    return {
      mode: 'full',
      complete,
      whole: complete,
      stoppedEarly: false,
      order,
      detail: complete ? null : verdict.detail,
      fellBack: null,
      windowStart: new Date(0),
    };
  }
}

async function rememberScan(
  ctx: SyncContext,
  memory: TransferMemory,
  read: TransferReadOutcome,
  scan: DistinctIds,
  order: ListOrder,
  complete: boolean,
  at: Date,
): Promise<void> {
  const list: TransferList = {
    order,
    pageSize: ctx.options.pageSize,
    servedSize: read.servedSize ?? ctx.options.pageSize,
    anonymous: scan.anonymous,
    lastFullScanAt: complete ? at : null,
  };
  if (complete) await memory.forgetUnseen(ctx.source.name, at); // ids the whole list no longer shows
  await memory.saveList(ctx.source.name, list, at);
}

async function finish(
  ctx: SyncContext,
  t: RunTally,
  v: Verdict,
  at: Date,
  ms: number,
): Promise<TransfersResult> {
  const outcome = v.complete ? 'complete' : 'incomplete';
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
  });
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
