/**
 * Runs one payments window to a verdict: complete, or incomplete with the numbers.
 *
 * Complete only on evidence (principle 2):
 * - With a page wrapper, the distinct ids received must reach the largest `total` the service reported.
 *   Offset pagination shifts when records arrive while paging, so a shortfall is re-read (ids accumulate
 *   across reads: every page read was loaded), then the window is cut in two and each half run again.
 * - With bare arrays there is no total. A window read in a single page, or a live window (re-read by the
 *   next ticks anyway), counts as complete; an older window read in several pages is read again and counts
 *   only when a read brings no id the earlier reads had not seen.
 * The verdict is written to the sync log after the window's rows are committed.
 */
import { recordWindow } from '../warehouse/loader.js';
import { readPaymentsWindow, type ReadOutcome } from './read-window.js';
import { partsFor, splitWindow, windowLabel, type Window } from './windows.js';
import type { SyncContext, WindowReport } from './context.js';

export type WindowKind = 'live' | 'backfill' | 'revisit';

export interface WindowResult extends WindowReport {
  detail: string | null;
}

/** Windows shorter than this are not split further. */
const MIN_SPLIT_MS = 60_000;
const MAX_BARE_READS = 3;
/** Most sub-windows one split makes (a day in 24 hours at most). */
const MAX_PARTS = 24;

interface Tally {
  union: Set<string>;
  anonymous: number;
  maxTotal: number | null;
  records: number;
  rejects: number;
  pages: number;
  reads: number;
}

function emptyTally(): Tally {
  return { union: new Set(), anonymous: 0, maxTotal: null, records: 0, rejects: 0, pages: 0, reads: 0 };
}

function merge(t: Tally, read: ReadOutcome): number {
  const before = t.union.size;
  for (const id of read.ids) t.union.add(id);
  t.anonymous = Math.max(t.anonymous, read.anonymous);
  if (read.maxTotal !== null) t.maxTotal = Math.max(t.maxTotal ?? 0, read.maxTotal);
  t.records += read.records;
  t.rejects += read.rejects;
  t.pages += read.pages;
  t.reads += 1;
  return t.union.size - before;
}

const distinct = (t: Tally) => t.union.size + t.anonymous;

const ignoredFilterWarned = new Set<string>();

function warnIfFilterIgnored(ctx: SyncContext, read: ReadOutcome): void {
  if (read.farOutside === 0 || ignoredFilterWarned.has(ctx.source.name)) return;
  ignoredFilterWarned.add(ctx.source.name);
  ctx.log.warn(
    { source: ctx.source.name, farOutside: read.farOutside },
    'the service returned records far outside the requested dateFrom/dateTo: it seems to ignore the date filter; ' +
      'every record is still loaded, but windows cost a full read',
  );
}

export async function runPaymentsWindow(
  ctx: SyncContext,
  window: Window,
  kind: WindowKind,
  depth = 0,
  parentTotal: number | null = null,
): Promise<WindowResult> {
  const started = Date.now();
  const t = emptyTally();
  const canSplit =
    depth < ctx.options.maxSplitDepth && window.end.getTime() - window.start.getTime() >= 2 * MIN_SPLIT_MS;
  // Records far outside the window, or a sub-window reporting as many records as its parent, mean the
  // service ignores the date filter: cutting would only multiply full reads, so the window is read whole.
  const tooLarge = (total: number | null, farOutside: number) =>
    canSplit &&
    farOutside === 0 &&
    !(parentTotal !== null && total !== null && total >= parentTotal) &&
    partsFor(total, ctx.options.pageSize, ctx.options.maxPagesPerWindow) > 1;

  const first = await readPaymentsWindow(ctx, window, { tooLarge });
  if (first.abandonedForSplit) {
    const parts = Math.min(
      MAX_PARTS,
      partsFor(first.maxTotal, ctx.options.pageSize, ctx.options.maxPagesPerWindow),
    );
    return runSplit(ctx, window, kind, depth, parts, started, first.maxTotal);
  }
  merge(t, first);
  warnIfFilterIgnored(ctx, first);

  let verdict: { complete: boolean; detail: string | null };
  if (t.maxTotal !== null) {
    verdict = await settleAgainstTotal(ctx, window, t);
    if (!verdict.complete && canSplit) return runSplit(ctx, window, kind, depth, 2, started, t.maxTotal);
  } else {
    verdict = await settleWithoutTotal(ctx, window, kind, t, first);
  }
  return finish(ctx, window, kind, t, verdict, started);
}

async function settleAgainstTotal(ctx: SyncContext, window: Window, t: Tally) {
  if (distinct(t) >= (t.maxTotal as number)) return { complete: true, detail: null };
  merge(t, await readPaymentsWindow(ctx, window)); // offset paging may have shifted: read again
  if (distinct(t) >= (t.maxTotal as number)) return { complete: true, detail: null };
  return {
    complete: false,
    detail: `received ${distinct(t)} distinct records of the ${t.maxTotal} the service reported, after ${t.reads} reads`,
  };
}

async function settleWithoutTotal(
  ctx: SyncContext,
  window: Window,
  kind: WindowKind,
  t: Tally,
  first: ReadOutcome,
) {
  if (first.nonEmptyPages <= 1 || kind === 'live') return { complete: true, detail: null };
  while (t.reads < MAX_BARE_READS) {
    const added = merge(t, await readPaymentsWindow(ctx, window));
    if (added === 0) return { complete: true, detail: null };
  }
  return {
    complete: false,
    detail: `no total sent and ${t.reads} reads kept finding new records (${distinct(t)} so far): the list shifts while paging`,
  };
}

async function runSplit(
  ctx: SyncContext,
  window: Window,
  kind: WindowKind,
  depth: number,
  parts: number,
  started: number,
  reportedTotal: number | null,
): Promise<WindowResult> {
  const results: WindowResult[] = [];
  for (const part of splitWindow(window, parts)) {
    const result = await runPaymentsWindow(ctx, part, kind, depth + 1, reportedTotal);
    results.push(result);
    // A part reporting as many records as the whole did: the service ignores the date filter, so that
    // one read (complete against its own total) already covered every record the other parts would.
    if (reportedTotal !== null && result.reportedTotal !== null && result.reportedTotal >= reportedTotal)
      break;
  }
  const t = emptyTally();
  for (const r of results) {
    t.records += r.records;
    t.rejects += r.rejects;
    t.pages += r.pages;
    t.reads += r.reads;
    t.anonymous += r.distinct;
    if (r.reportedTotal !== null) t.maxTotal = (t.maxTotal ?? 0) + r.reportedTotal;
  }
  const failed = results.filter((r) => r.outcome !== 'complete');
  const verdict = failed.length
    ? {
        complete: false,
        detail: `${failed.length} of ${results.length} sub-windows incomplete: ${failed[0]?.detail ?? ''}`,
      }
    : { complete: true, detail: null };
  return finish(ctx, window, kind, t, verdict, started);
}

async function finish(
  ctx: SyncContext,
  window: Window,
  kind: WindowKind,
  t: Tally,
  verdict: { complete: boolean; detail: string | null },
  started: number,
): Promise<WindowResult> {
  const result: WindowResult = {
    source: ctx.source.name,
    stream: 'payments',
    window: windowLabel(window),
    kind,
    pages: t.pages,
    records: t.records,
    rejects: t.rejects,
    reportedTotal: t.maxTotal,
    distinct: distinct(t),
    reads: t.reads,
    outcome: verdict.complete ? 'complete' : 'incomplete',
    ms: Date.now() - started,
    detail: verdict.detail,
  };
  await recordWindow(ctx.pool, {
    source: ctx.source.name,
    stream: 'payments',
    windowStart: window.start,
    windowEnd: window.end,
    kind,
    fetchedAt: new Date(started),
    records: t.records,
    rejects: t.rejects,
    reportedTotal: t.maxTotal,
    pages: t.pages,
    outcome: result.outcome,
    detail: verdict.detail,
  });
  const level = verdict.complete ? 'info' : 'warn';
  ctx.log[level]({ ...result }, verdict.complete ? 'window synced' : 'window incomplete');
  ctx.onWindow?.(result);
  return result;
}
