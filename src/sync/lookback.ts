/**
 * The settled part of a live tick's lookback (the whole local days before the checkpoint), read only as
 * far as the evidence requires (lookback-plan.ts says what makes a read skippable): one request for the
 * service's count of the range, the warehouse's own count and open records, then the INIT and PENDING
 * lists and each open record that moved on, when that is cheaper than reading the windows in full.
 * Returns the windows it settled (their sync-log rows written) and the ones to read in full as before.
 *
 * Those reads hold part of the list only (one status, or a few seconds), so they cannot judge copies of
 * one record (copies.ts): they write none of an id the rejects hold as contradicted, and a window holding
 * such an id, or an id they listed twice, is read in full, whose reads judge every copy.
 */
import { performance } from 'node:perf_hooks';
import { describeError } from '../errors.js';
import type { TickDeps } from './context.js';
import { clockOf } from './context.js';
import { decideLookback, decideMoved, worthCounting, type WindowPlan } from './lookback-plan.js';
import { readPaymentsWindow, type ReadOutcome } from './read-window.js';
import { finishConfirmed, type WindowResult } from './window-run.js';
import { contains, paddedQuery, windowLabel, type Window } from './windows.js';

export interface LookbackOutcome {
  /** Settled windows, by label, with their sync-log rows written. */
  settled: Map<string, WindowResult>;
  /** Windows to read in full. */
  full: Window[];
  /** Requests this took (the count, the status lists, the moved records). */
  requests: number;
}

/** A read that ended on evidence: every record of its total, or (bare arrays) an empty page. */
function ended(read: ReadOutcome): boolean {
  if (!read.summary) return false;
  return read.maxTotal !== null ? read.ids.size >= read.maxTotal : read.summary.endedBy === 'empty-page';
}

const SECOND = 1_000;

export async function readLookback(
  deps: TickDeps,
  windows: readonly Window[],
  statusFilter: boolean,
): Promise<LookbackOutcome> {
  const none = { settled: new Map<string, WindowResult>(), full: [...windows], requests: 0 };
  const first = windows[0];
  const last = windows.at(-1);
  if (!first || !last) return none;
  const startedMs = performance.now();
  const at = clockOf(deps);
  const range: Window = { start: first.start, end: last.end };
  const query = paddedQuery(range, deps.options.padMs);
  let requests = 0;
  try {
    const held = await deps.warehouse.heldInRange(deps.source.name, query.dateFrom, query.dateTo);
    const share = (held.held ?? 0) / windows.length;
    const evidence = {
      held: held.held,
      windows: windows.map((w) => ({ held: share, open: openByStatus(held.open, w) })),
      statusFilter,
      pageSize: deps.options.pageSize,
    };
    if (!worthCounting(evidence)) return none;
    const counted = await deps.client.listPayments({ page: 0, size: 1, ...query });
    requests += 1;
    const plan = decideLookback({ ...evidence, total: counted.total });
    deps.log.debug({ source: deps.source.name, plan: plan.why }, 'lookback planned');
    const byStatus = windows.filter((_, i) => plan.windows[i] === 'by-status');
    const watch = byStatus.length ? await contradicted(deps) : new Set<string>();
    const moved = byStatus.length ? await readOpen(deps, range, byStatus, held.open, share, watch) : null;
    requests += moved?.requests ?? 0;
    const copies = windowsHoldingAny(windows, moved?.copiesCreated ?? []);
    const final = plan.windows.map((p, i): WindowPlan => {
      if (copies.has(i)) return 'full';
      if (p !== 'by-status') return p;
      return moved?.full.has(windowLabel(windows[i] as Window)) ? 'full' : 'done';
    });
    const settled = new Map<string, WindowResult>();
    for (const [i, w] of windows.entries()) {
      if (final[i] !== 'done') continue;
      const mine = i === 0 ? requests : 0; // the lookback's requests are recorded on its first window
      settled.set(
        windowLabel(w),
        await finishConfirmed(deps, w, {
          pages: mine,
          records: i === 0 ? (moved?.records ?? 0) : 0,
          reportedTotal: i === 0 ? counted.total : null,
          startedMs,
          at,
        }),
      );
    }
    return { settled, full: windows.filter((_, i) => final[i] === 'full'), requests };
  } catch (error) {
    // whatever went wrong, the windows are read as before, which reports what is wrong with them
    deps.log.debug({ source: deps.source.name, error: describeError(error) }, 'lookback read in full');
    return { ...none, requests };
  }
}

function openByStatus(open: ReadonlyArray<{ createdAt: Date; status: string }>, w: Window) {
  const counts: Record<string, number> = {};
  for (const r of open) if (contains(w, r.createdAt)) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

/** Ids the rejects hold as listed in contradicting copies: none of their copies is written here. */
async function contradicted(deps: TickDeps): Promise<Set<string>> {
  return new Set((await deps.warehouse.contradictedIds?.(deps.source.name, 'payments')) ?? []);
}

/** Indices of the windows holding any of these createdAt instants. */
function windowsHoldingAny(windows: readonly Window[], createdAts: readonly string[]): Set<number> {
  const out = new Set<number>();
  for (const text of createdAts) {
    const at = new Date(text);
    windows.forEach((w, i) => {
      if (contains(w, at)) out.add(i);
    });
  }
  return out;
}

interface OpenRead {
  /** Labels of the windows to read in full after all. */
  full: Set<string>;
  /** The createdAt of the copies these reads left unjudged: their windows are read in full. */
  copiesCreated: string[];
  records: number;
  requests: number;
}

/**
 * The list of each open status held in `windows` (INIT, PENDING), over the range, then each open record
 * held there that is in none of them.
 */
async function readOpen(
  deps: TickDeps,
  range: Window,
  windows: readonly Window[],
  open: ReadonlyArray<{ id: string; createdAt: Date; status: string }>,
  heldPerWindow: number,
  watch: ReadonlySet<string>,
): Promise<OpenRead> {
  const mine = open.filter((r) => windows.some((w) => contains(w, r.createdAt)));
  const part = { partial: true, ...(watch.size > 0 ? { watch } : {}) };
  const lists: ReadOutcome[] = [];
  for (const status of [...new Set(mine.map((r) => r.status))].sort())
    lists.push(await readPaymentsWindow(deps, range, { status, ...part }));
  let requests = lists.reduce((n, r) => n + r.pages, 0);
  let records = lists.reduce((n, r) => n + r.records, 0);
  const copiesCreated = lists.flatMap((l) => l.unjudgedCreated);
  const movedOn = mine.filter((r) => !lists.some((l) => l.ids.ids.has(r.id)));
  const fullCost = windows.length * Math.max(1, Math.ceil(heldPerWindow / deps.options.pageSize));
  const verdict = decideMoved({
    complete: lists.every(ended),
    off: lists.reduce((n, r) => n + r.offStatus + r.rejects, 0),
    moved: movedOn.length,
    fullCost,
  });
  deps.log.debug({ source: deps.source.name, open: verdict.why }, 'lookback open records');
  const all = new Set(windows.map(windowLabel));
  if (verdict.read === 'full') return { full: all, copiesCreated, records, requests };
  const full = new Set<string>();
  for (const record of movedOn) {
    const t = record.createdAt.getTime();
    const around = { start: new Date(t - SECOND), end: new Date(t + SECOND) };
    const read = await readPaymentsWindow(deps, around, part);
    requests += read.pages;
    records += read.records;
    for (const created of read.unjudgedCreated) copiesCreated.push(created);
    if (!ended(read) || !read.ids.ids.has(record.id)) {
      const home = windows.find((w) => contains(w, record.createdAt));
      if (home) full.add(windowLabel(home));
    }
  }
  return { full, copiesCreated, records, requests };
}
