/**
 * The reads of one transfers run, each judged once by its verdict (read-verdict.ts) and acting on nothing:
 * the shortcut read the plan chose (newest-first or tail), then, unless it proved the list whole, a full
 * scan, read once more on a shortfall. What a verdict asks to be remembered, transfers-run.ts writes.
 */
import type { SyncContext } from './context.js';
import {
  confirmedCopies,
  DistinctIds,
  decideNewestFirst,
  decideScan,
  decideTail,
  orderOf,
  type Listing,
} from './read-verdict.js';
import { listingOf } from './listing.js';
import type { NoteCode } from './window-reasons.js';
import type { ListOrder, TransferList } from './transfer-state.js';
import { readTransferList, type TransferReadOutcome } from './transfers-read.js';

/** What a run is asked to read (tick.ts, or a backfill's full scan). */
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

/** What the reads of a run accumulate, and when it began (stamps positions and the sync log). */
export interface RunTally {
  at: Date;
  ids: DistinctIds;
  records: number;
  rejects: number;
  pages: number;
  reads: number;
  maxTotal: number | null;
  /** Anomalies the reads saw (an impossible total, records quarantined for impossible times). */
  anomalies?: Set<NoteCode>;
  /**
   * Ids whose copies each read holds back (copies.ts): the ones the rejects hold as contradicted, and the
   * ones a read listed more than once; a read of the whole list judges them.
   */
  watch?: Set<string>;
}

/** What the list is to be remembered as, once the verdict is in. */
export type Remember =
  | { kind: 'scan'; firstRead: TransferReadOutcome; scan: DistinctIds; order: ListOrder; complete: boolean }
  | { kind: 'tail'; list: TransferList | null };

export interface Verdict {
  mode: 'newest-first' | 'tail' | 'full';
  complete: boolean;
  /** Why it is not complete (read-verdict.ts decideScan); null when complete. */
  reason?: 'TOTAL_SHORT' | 'DUPLICATES_UNCONFIRMED' | null;
  /** Copies beyond the first listing that two full reads agreed on. */
  duplicates?: number;
  /** The read proved every transfer of the list is held (clears an incomplete mark). */
  whole: boolean;
  stoppedEarly: boolean;
  order: ListOrder;
  detail: string | null;
  fellBack: string | null;
  windowStart: Date;
  remember: Remember | null;
}

/** A shortcut read judged: proven, or a full scan follows (because it fell back, or it ran to the end). */
export type ShortcutOutcome = { proven: Verdict } | { fellBack: string } | { ranToEnd: TransferReadOutcome };

async function read(
  ctx: SyncContext,
  t: RunTally,
  spec: { startPage: number; skipped: number; stopBefore: Date | null; organizationId: string | null },
) {
  const watch = t.watch && t.watch.size > 0 ? { watch: t.watch } : {};
  const outcome = await readTransferList(ctx, ctx.transferMemory, { ...spec, at: t.at, ...watch });
  t.ids.merge(outcome.ids);
  t.records += outcome.records;
  t.rejects += outcome.rejects;
  t.pages += outcome.pages;
  t.reads += 1;
  if (outcome.maxTotal !== null) t.maxTotal = Math.max(t.maxTotal ?? 0, outcome.maxTotal);
  if (outcome.anomalies.size > 0) t.anomalies = new Set([...(t.anomalies ?? []), ...outcome.anomalies]);
  if (outcome.unjudged.size > 0) t.watch = new Set([...(t.watch ?? []), ...outcome.unjudged]);
  return outcome;
}

/** A shortcut read that held copies unjudged cannot prove them: a full scan judges them (copies.ts). */
function copiesUnjudged(read: TransferReadOutcome): ShortcutOutcome | null {
  if (read.unjudged.size === 0) return null;
  return {
    fellBack: `${read.unjudged.size} transfer(s) listed more than once or in contradicting copies: a full scan judges their copies`,
  };
}

/** Distinct ids the memory holds for the source now, records without an id included. */
async function heldNow(ctx: SyncContext, list: TransferList | null): Promise<number> {
  return (await ctx.transferMemory.held(ctx.source.name)) + (list?.anonymous ?? 0);
}

/**
 * Newest-first: from page 0 until past `stopBefore` while the order holds (if it breaks, the read runs to
 * the end and is judged as a full scan's first read). Judged by decideNewestFirst on the ids then held.
 */
export async function readNewestFirst(
  ctx: SyncContext,
  plan: TransfersPlan,
  t: RunTally,
): Promise<ShortcutOutcome> {
  const spec = { startPage: 0, skipped: 0, stopBefore: plan.stopBefore, organizationId: plan.organizationId };
  const first = await read(ctx, t, spec);
  if (first.summary !== null) return { ranToEnd: first };
  const unjudged = copiesUnjudged(first);
  if (unjudged) return unjudged;
  const list = await ctx.transferMemory.list(ctx.source.name);
  const verdict = decideNewestFirst({ held: await heldNow(ctx, list), maxTotal: t.maxTotal });
  if (verdict.verdict === 'full-scan') return { fellBack: verdict.why };
  return {
    proven: {
      mode: 'newest-first',
      complete: true,
      whole: t.maxTotal !== null,
      stoppedEarly: true,
      order: 'newest-first',
      detail: null,
      fellBack: null,
      windowStart: plan.stopBefore ?? new Date(0),
      remember: null,
    },
  };
}

/** Oldest-first: from `startPage` to the end, judged by decideTail. */
export async function readTail(ctx: SyncContext, plan: TransfersPlan, t: RunTally): Promise<ShortcutOutcome> {
  const list = await ctx.transferMemory.list(ctx.source.name);
  const spec = {
    startPage: plan.startPage ?? 0,
    skipped: plan.skipped ?? 0,
    stopBefore: null,
    organizationId: plan.organizationId,
  };
  const tail = await read(ctx, t, spec);
  const unjudged = copiesUnjudged(tail);
  if (unjudged) return unjudged;
  const mustSee = plan.mustSee ?? [];
  const verdict = decideTail({
    oldestFirst: tail.order.ascending,
    firstPageCount: tail.firstPage.count,
    firstPageKnown: tail.firstPage.known,
    geometryChanged: tail.servedSize !== null && tail.servedSize !== list?.servedSize,
    unsettledMissed: mustSee.filter((id) => !tail.ids.ids.has(id)).length,
    held: await heldNow(ctx, list),
    maxTotal: tail.maxTotal,
  });
  if (verdict.verdict === 'full-scan') return { fellBack: verdict.why };
  return {
    proven: {
      mode: 'tail',
      complete: true,
      whole: true,
      stoppedEarly: false,
      order: 'oldest-first',
      detail: null,
      fellBack: null,
      windowStart: new Date(0),
      remember: { kind: 'tail', list },
    },
  };
}

/**
 * A full scan from page 0 to the end, judged by decideScan after each read: complete, read once more, or
 * incomplete. `first` is a read from page 0 to the end already made (a newest-first read that ran on).
 */
export async function scanInFull(
  ctx: SyncContext,
  plan: TransfersPlan,
  t: RunTally,
  first: TransferReadOutcome | null,
): Promise<Verdict> {
  const scan = new DistinctIds();
  const spec = { startPage: 0, skipped: 0, stopBefore: null, organizationId: plan.organizationId };
  let next = first ?? (await read(ctx, t, spec));
  const firstRead = next;
  const listings: Listing[] = [];
  for (let reads = 1; ; reads++) {
    listings.push(listingOf(next));
    scan.merge(next.ids);
    const verdict = decideScan({
      reads,
      distinct: scan.size,
      maxTotal: t.maxTotal,
      confirmedCopies: confirmedCopies(listings),
      copiesSeen: listings.some((l) => l.copiesKey !== null),
      copiesUnjudged: next.unjudged.size > 0,
    });
    if (verdict.verdict === 're-read') {
      next = await read(ctx, t, spec);
      continue;
    }
    const complete = verdict.verdict === 'complete';
    const order = orderOf(firstRead.order);
    return {
      mode: 'full',
      complete,
      reason: verdict.verdict === 'incomplete' ? verdict.reason : null,
      duplicates: verdict.verdict === 'complete' ? (verdict.duplicates ?? 0) : 0,
      whole: complete,
      stoppedEarly: false,
      order,
      detail: complete ? null : verdict.detail,
      fellBack: null,
      windowStart: new Date(0),
      remember: { kind: 'scan', firstRead, scan, order, complete },
    };
  }
}
