/**
 * Runs one payments window to a verdict: complete, or incomplete with the numbers.
 *
 * The reads gather evidence (read-window.ts); whether the window is complete, is read again, is split or
 * is reported incomplete is decided by `decideWindow` and `decideSplitFirst` (read-verdict.ts, pure).
 * The verdict is written to the sync log after the window's rows are committed; a complete window clears
 * the incomplete marks of every window it covers.
 */
import { performance } from 'node:perf_hooks';
import { KnownPages, readPaymentsWindow, type ReadOutcome } from './read-window.js';
import {
  confirmedCopies,
  DistinctIds,
  decideSplitFirst,
  decideWindow,
  type Listing,
} from './read-verdict.js';
import { clearCoveredMarks } from './incomplete-marks.js';
import { listingOf } from './listing.js';
import { partsFor, splitWindow, windowLabel, type Window } from './windows.js';
import { clockOf, type SyncContext, type WindowReport } from './context.js';
import { recordFailedRun } from './window-failure.js';
import { blocksDay, type NoteCode, type ReasonCode } from './window-reasons.js';

export type WindowKind = 'live' | 'backfill' | 'revisit';

export interface WindowResult extends WindowReport {
  detail: string | null;
  /** Copies beyond the first listing of records the service listed more than once (two reads agreed). */
  duplicates: number;
  /** Codes of the anomalies (notes) the run saw. */
  anomalies: NoteCode[];
  /** Pages of its confirmation reads that came back byte for byte as read before: not parsed or written again. */
  reusedPages: number;
}

/** Ids still listed in contradicting copies (the rejects say so), or none when the warehouse cannot tell. */
async function contradictedIds(ctx: SyncContext): Promise<string[]> {
  return (await ctx.warehouse.contradictedIds?.(ctx.source.name, 'payments')) ?? [];
}

/** Windows shorter than this are not split further. */
const MIN_SPLIT_MS = 60_000;
/** Most sub-windows one split makes (a day in 24 hours at most). */
const MAX_PARTS = 24;

interface Tally {
  ids: DistinctIds;
  /** Distinct records of the sub-windows a split window was read in. */
  partsDistinct: number;
  maxTotal: number | null;
  records: number;
  rejects: number;
  pages: number;
  reads: number;
  /** Pages a confirmation read found unchanged, byte for byte (read-window.ts KnownPages). */
  reusedPages: number;
  /** What each read listed (entries, copies): the evidence for duplicates (confirmedCopies). */
  listings: Listing[];
  /** Copies beyond the first listing that two reads confirmed (of the sub-windows, summed). */
  duplicates: number;
  /** Codes of the anomalies (notes) the reads saw. */
  anomalies: Set<NoteCode>;
}

function emptyTally(): Tally {
  return {
    ids: new DistinctIds(),
    partsDistinct: 0,
    maxTotal: null,
    records: 0,
    rejects: 0,
    pages: 0,
    reads: 0,
    reusedPages: 0,
    listings: [],
    duplicates: 0,
    anomalies: new Set(),
  };
}

/**
 * Adds a read; returns how many ids it brought that the earlier reads had not. The first read's set becomes
 * the tally's instead of being copied (a window's set holds up to 100k ids: a copy would be a second set
 * in memory and about 1% of a backfill's CPU); nothing reads that outcome's ids afterwards.
 */
function merge(t: Tally, read: ReadOutcome): number {
  t.listings.push(listingOf(read)); // before the merge: the tally adopts the first read's set
  const adopt = t.reads === 0 && t.ids.size === 0;
  if (adopt) t.ids = read.ids;
  const added = adopt ? read.ids.ids.size : t.ids.merge(read.ids);
  if (read.maxTotal !== null) t.maxTotal = Math.max(t.maxTotal ?? 0, read.maxTotal);
  t.records += read.records;
  t.rejects += read.rejects;
  t.pages += read.pages;
  t.reads += 1;
  t.reusedPages += read.reusedPages;
  for (const code of read.anomalies) t.anomalies.add(code);
  return added;
}

const distinct = (t: Tally) => t.ids.size + t.partsDistinct;

/**
 * When a run began: `at` on the sync clock (the sync log's fetched_at), `ms` for its duration; `recorded`
 * once its verdict row is written (a failure after that must not overwrite it).
 */
interface Started {
  ms: number;
  at: Date;
  recorded: boolean;
}

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

/** What a verdict says of the window: complete, or not with its reason code and words. */
type Verdict = { complete: true; detail: null } | { complete: false; reason: ReasonCode; detail: string };

/**
 * Runs the window to a verdict and writes it to the sync log. Whatever ends the run (an upstream error
 * past its retries, a paging failure, a refused write, a bug), the window gets its row: failed, with the
 * error's reason code and message (window-failure.ts), and the error is rethrown for the caller to
 * handle as before (a tick goes on to the next window, a backfill item is retried).
 */
export async function runPaymentsWindow(
  ctx: SyncContext,
  window: Window,
  kind: WindowKind,
  depth = 0,
  parentTotal: number | null = null,
): Promise<WindowResult> {
  const started = { ms: performance.now(), at: clockOf(ctx), recorded: false };
  try {
    return await runToVerdict(ctx, window, kind, depth, parentTotal, started);
  } catch (error) {
    if (!started.recorded)
      await recordFailedRun(ctx, {
        stream: 'payments',
        window,
        kind,
        fetchedAt: started.at,
        ms: performance.now() - started.ms,
        error,
      });
    throw error;
  }
}

/** Bare-array backfill windows a process reads at once (SyncContext.bareWindowTurn). */
export const BARE_WINDOWS_AT_ONCE = 2;

/**
 * A backfill window's turn to be read whole (SyncContext.bareWindowTurn), taken when its first page shows
 * a bare array and held until its verdict, or until it is split (each part then takes its own). A tick's
 * windows (live, revisit) take none: a tick reads one window at a time and must not wait behind a backfill.
 */
interface BareTurn {
  take?: () => Promise<void>;
  end(): void;
}

function bareTurn(ctx: SyncContext, kind: WindowKind): BareTurn {
  const turn = kind === 'backfill' ? ctx.bareWindowTurn : undefined;
  if (!turn) return { end: () => undefined };
  let end = () => undefined as void;
  return {
    take: async () => {
      end = await turn();
    },
    end: () => end(),
  };
}

async function runToVerdict(
  ctx: SyncContext,
  window: Window,
  kind: WindowKind,
  depth: number,
  parentTotal: number | null,
  started: Started,
): Promise<WindowResult> {
  const turn = bareTurn(ctx, kind);
  try {
    return await readToVerdict(ctx, window, kind, depth, parentTotal, started, turn);
  } finally {
    turn.end();
  }
}

async function readToVerdict(
  ctx: SyncContext,
  window: Window,
  kind: WindowKind,
  depth: number,
  parentTotal: number | null,
  started: Started,
  turn: BareTurn,
): Promise<WindowResult> {
  const t = emptyTally();
  const canSplit =
    depth < ctx.options.maxSplitDepth && window.end.getTime() - window.start.getTime() >= 2 * MIN_SPLIT_MS;
  const { pageSize, maxPagesPerWindow } = ctx.options;
  const tooLarge = (reportedTotal: number | null, farOutside: number) =>
    decideSplitFirst({
      reportedTotal,
      farOutside,
      parentTotal,
      canSplit,
      parts: Math.min(MAX_PARTS, partsFor(reportedTotal, pageSize, maxPagesPerWindow)),
    }).split;

  const known = new KnownPages();
  // ids the rejects hold as listed in contradicting copies: every copy is judged at the end of each read
  const watch = new Set(await contradictedIds(ctx));
  const first = await readPaymentsWindow(ctx, window, {
    tooLarge,
    remember: known,
    watch,
    ...(turn.take ? { beforeMoreBarePages: turn.take } : {}),
  });
  if (first.abandonedForSplit) {
    turn.end();
    const parts = Math.min(MAX_PARTS, partsFor(first.maxTotal, pageSize, maxPagesPerWindow));
    return runSplit(ctx, window, kind, depth, parts, started, first.maxTotal);
  }
  merge(t, first);
  warnIfFilterIgnored(ctx, first);
  let unjudged = first.unjudged;
  let added: number | null = null;
  for (;;) {
    const v = decideWindow({
      kind,
      reads: t.reads,
      distinct: distinct(t),
      maxTotal: t.maxTotal,
      firstReadPages: first.nonEmptyPages,
      addedByLastRead: added,
      canSplit,
      confirmedCopies: confirmedCopies(t.listings),
      copiesSeen: t.listings.some((l) => l.copiesKey !== null),
      copiesUnjudged: unjudged.size > 0,
    });
    if (v.verdict === 're-read') {
      for (const id of unjudged) watch.add(id);
      // a page counted by its bytes is not parsed: a read judging copies parses every page
      const again = await readPaymentsWindow(ctx, window, watch.size > 0 ? { watch } : { known });
      unjudged = again.unjudged;
      added = merge(t, again);
    } else if (v.verdict === 'split') {
      turn.end(); // the parts take turns of their own
      return runSplit(ctx, window, kind, depth, v.parts, started, t.maxTotal);
    } else if (v.verdict === 'complete') {
      if (v.duplicates) {
        t.duplicates = v.duplicates;
        t.anomalies.add('DUPLICATES_LISTED');
      }
      return finish(ctx, window, kind, t, { complete: true, detail: null }, started);
    } else
      return finish(ctx, window, kind, t, { complete: false, reason: v.reason, detail: v.detail }, started);
  }
}

async function runSplit(
  ctx: SyncContext,
  window: Window,
  kind: WindowKind,
  depth: number,
  parts: number,
  started: Started,
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
    t.reusedPages += r.reusedPages;
    t.partsDistinct += r.distinct;
    t.duplicates += r.duplicates;
    for (const code of r.anomalies) t.anomalies.add(code);
    if (r.reportedTotal !== null) t.maxTotal = (t.maxTotal ?? 0) + r.reportedTotal;
  }
  const failed = results.filter((r) => r.outcome !== 'complete');
  const first = failed[0];
  const verdict: Verdict = first
    ? {
        complete: false,
        reason: first.reasonCode ?? 'INTERNAL_ERROR',
        detail: `${failed.length} of ${results.length} sub-windows incomplete: ${first.detail ?? ''}`,
      }
    : { complete: true, detail: null };
  return finish(ctx, window, kind, t, verdict, started);
}

async function finish(
  ctx: SyncContext,
  window: Window,
  kind: WindowKind,
  t: Tally,
  verdict: Verdict,
  started: Started,
): Promise<WindowResult> {
  const reasonCode = verdict.complete ? null : verdict.reason;
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
    reusedPages: t.reusedPages,
    duplicates: t.duplicates,
    anomalies: [...t.anomalies].sort(),
    outcome: verdict.complete ? 'complete' : 'incomplete',
    reasonCode,
    ms: Math.round(performance.now() - started.ms),
    detail: verdict.detail,
  };
  await ctx.warehouse.recordWindow({
    source: ctx.source.name,
    stream: 'payments',
    windowStart: window.start,
    windowEnd: window.end,
    kind,
    fetchedAt: started.at,
    records: t.records,
    rejects: t.rejects,
    reportedTotal: t.maxTotal,
    pages: t.pages,
    outcome: result.outcome,
    detail: verdict.detail,
    reasonCode,
    blocksDay: blocksDay(reasonCode),
    duplicates: result.duplicates,
    anomalies: result.anomalies,
  });
  started.recorded = true;
  if (verdict.complete && ctx.checkpoints) await clearCoveredMarks(ctx.checkpoints, ctx.source.name, window);
  const level = verdict.complete ? 'info' : 'warn';
  ctx.log[level]({ ...result }, verdict.complete ? 'window synced' : 'window incomplete');
  ctx.onWindow?.(result);
  return result;
}

/**
 * A settled window of a live tick's lookback that the tick did not read in full, because the evidence
 * showed nothing in it could have changed (lookback.ts): its row in the sync log says complete, with the
 * requests it took (`pages`, its share of the lookback's) and the records it re-read (open ones, by status).
 */
export async function finishConfirmed(
  ctx: SyncContext,
  window: Window,
  e: { pages: number; records: number; reportedTotal: number | null; startedMs: number; at: Date },
): Promise<WindowResult> {
  const t = emptyTally();
  t.pages = e.pages;
  t.records = e.records;
  t.maxTotal = e.reportedTotal;
  t.reads = e.pages > 0 ? 1 : 0;
  return finish(
    ctx,
    window,
    'live',
    t,
    { complete: true, detail: null },
    {
      ms: e.startedMs,
      at: e.at,
      recorded: false,
    },
  );
}
