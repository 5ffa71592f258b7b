/**
 * The verdicts of every kind of read, as pure functions (like `decideNextPage` in upstream/paging.ts):
 * given what the reads showed, is the read complete, to be read again, to be split, or does it fall back
 * to a full scan? The code that reads (window-run.ts, transfers-run.ts) only gathers the evidence and
 * does what these say. Principle 2: complete only on evidence; a shortfall is re-read, then reported.
 */

/** Distinct records received, by id; a record without a usable id counts once per copy. */
export class DistinctIds {
  readonly ids = new Set<string>();
  anonymous = 0;

  add(id: string | null): void {
    if (id === null) this.anonymous += 1;
    else this.ids.add(id);
  }

  /**
   * Adds another read's ids; returns how many were new. Anonymous records cannot be matched across
   * reads: the larger count is kept (each read of the same list sees the same ones).
   */
  merge(other: DistinctIds): number {
    const before = this.ids.size;
    for (const id of other.ids) this.ids.add(id);
    this.anonymous = Math.max(this.anonymous, other.anonymous);
    return this.ids.size - before;
  }

  get size(): number {
    return this.ids.size + this.anonymous;
  }
}

// ---- records listed more than once ----------------------------------------------------------------

/**
 * What one full read listed: entries (every listing, copies included), distinct records, the `total` it
 * reported, and a key of its ids and copies (null when it listed no record twice). The interface promises
 * neither unique ids on a list nor what `total` counts: a service may list a record twice and count both.
 */
export interface Listing {
  entries: number;
  distinct: number;
  total: number | null;
  /** SHA-256 of the read's sorted ids and of its copies (id and count); null without copies. */
  copiesKey: string | null;
}

/**
 * Duplicates as evidence: a list that names records more than once is complete when two full reads each
 * returned `total` entries, copies included, with the same ids and the same copies. Returns how many
 * copies beyond the first listing those reads agree on, or null when no two reads confirm them. Pure.
 */
export function confirmedCopies(listings: readonly Listing[]): number | null {
  const full = listings.filter(
    (l) => l.copiesKey !== null && l.total !== null && l.entries === l.total && l.distinct < l.total,
  );
  for (let i = 0; i < full.length; i++)
    for (let j = i + 1; j < full.length; j++) {
      const a = full[i] as Listing;
      const b = full[j] as Listing;
      if (a.copiesKey === b.copiesKey && a.total === b.total) return a.entries - a.distinct;
    }
  return null;
}

// ---- payments windows ----------------------------------------------------------------------------

export const MAX_BARE_READS = 3;
export const MAX_TOTAL_READS = 2;

export interface WindowEvidence {
  /** `live` windows are read again by the next ticks; `backfill` and `revisit` ones are not. */
  kind: 'live' | 'backfill' | 'revisit';
  reads: number;
  /** Distinct records over all reads of the window. */
  distinct: number;
  /** The largest `total` any page of any read reported; null when the service sent none (bare arrays). */
  maxTotal: number | null;
  /** Non-empty pages of the first read. */
  firstReadPages: number;
  /** Ids the last read added to the earlier ones (null after the first read). */
  addedByLastRead: number | null;
  canSplit: boolean;
  /** Copies two full reads agreed on (confirmedCopies), or null. */
  confirmedCopies?: number | null;
  /** Whether any read listed a record more than once. */
  copiesSeen?: boolean;
  /** Copies of one record on different pages that the last read held back unjudged (copies.ts). */
  copiesUnjudged?: boolean;
}

export type WindowVerdict =
  | { verdict: 'complete'; duplicates?: number }
  | { verdict: 're-read' }
  | { verdict: 'split'; parts: number }
  | {
      verdict: 'incomplete';
      reason: 'TOTAL_SHORT' | 'LIST_SHIFTING' | 'DUPLICATES_UNCONFIRMED';
      detail: string;
    };

/**
 * With a `total`: complete when the distinct ids reach it; offset paging shifts when records arrive while
 * paging, so a shortfall is read once more (ids accumulate), then the window is cut in two, then reported.
 * Without one: a window in one page, or a live one, is complete; an older window read in several pages
 * counts only once a read brings no id the earlier reads had not seen.
 */
export function decideWindow(e: WindowEvidence): WindowVerdict {
  // copies of a record on different pages are judged by a read that holds them all: one more read
  if (e.copiesUnjudged && e.reads <= MAX_TOTAL_READS) return { verdict: 're-read' };
  if (e.maxTotal !== null) {
    if (e.distinct >= e.maxTotal) return { verdict: 'complete' };
    const copies = e.confirmedCopies ?? null;
    if (copies !== null && e.distinct + copies >= e.maxTotal)
      return { verdict: 'complete', duplicates: copies };
    if (e.reads < MAX_TOTAL_READS) return { verdict: 're-read' };
    if (e.canSplit) return { verdict: 'split', parts: 2 };
    if (e.copiesSeen)
      return {
        verdict: 'incomplete',
        reason: 'DUPLICATES_UNCONFIRMED',
        detail:
          `received ${e.distinct} distinct records of the ${e.maxTotal} the service reported, some listed more than once, ` +
          `after ${e.reads} reads: no two full reads listed the same ids and copies`,
      };
    return {
      verdict: 'incomplete',
      reason: 'TOTAL_SHORT',
      detail: `received ${e.distinct} distinct records of the ${e.maxTotal} the service reported, after ${e.reads} reads`,
    };
  }
  if (e.firstReadPages <= 1 || e.kind === 'live') return { verdict: 'complete' };
  if (e.addedByLastRead === 0) return { verdict: 'complete' };
  if (e.reads < MAX_BARE_READS) return { verdict: 're-read' };
  return {
    verdict: 'incomplete',
    reason: 'LIST_SHIFTING',
    detail: `no total sent and ${e.reads} reads kept finding new records (${e.distinct} so far): the list shifts while paging`,
  };
}

export interface FirstPageEvidence {
  reportedTotal: number | null;
  /** Records on the first page created more than a day outside the padded request. */
  farOutside: number;
  /** The `total` of the window this one was split from, if any. */
  parentTotal: number | null;
  canSplit: boolean;
  /** How many parts the reported total asks for (windows.partsFor). */
  parts: number;
}

/**
 * Whether to abandon a window after its first page and split it. Not when records come back far outside
 * the window, nor when a part reports as many records as its parent: the service ignores the date filter
 * and cutting would only multiply full reads.
 */
export function decideSplitFirst(e: FirstPageEvidence): { split: false } | { split: true; parts: number } {
  const ignoresFilter =
    e.farOutside > 0 ||
    (e.parentTotal !== null && e.reportedTotal !== null && e.reportedTotal >= e.parentTotal);
  if (!e.canSplit || ignoresFilter || e.parts <= 1) return { split: false };
  return { split: true, parts: e.parts };
}

// ---- transfers -------------------------------------------------------------------------------------

export const MAX_SCAN_READS = 2;

export interface ScanEvidence {
  reads: number;
  /** Distinct records over all reads of the scan. */
  distinct: number;
  maxTotal: number | null;
  /** Copies two full reads agreed on (confirmedCopies), or null. */
  confirmedCopies?: number | null;
  /** Whether any read listed a transfer more than once. */
  copiesSeen?: boolean;
  /** Copies of one transfer on different pages that the last read held back unjudged (copies.ts). */
  copiesUnjudged?: boolean;
}

export type ScanVerdict =
  | { verdict: 'complete'; duplicates?: number }
  | { verdict: 're-read' }
  | { verdict: 'incomplete'; reason: 'TOTAL_SHORT' | 'DUPLICATES_UNCONFIRMED'; detail: string };

/**
 * A full scan (paging ended on evidence, or readPages would have thrown): complete when the distinct ids
 * reach the largest `total` (bare arrays: the empty page is the evidence). A shortfall is read once more,
 * ids accumulating: a transfer created while paging an oldest-first list shifts the pages by one.
 */
export function decideScan(e: ScanEvidence): ScanVerdict {
  // copies of a transfer on different pages are judged by a read that holds them all: one more read
  if (e.copiesUnjudged && e.reads <= MAX_SCAN_READS) return { verdict: 're-read' };
  if (e.maxTotal === null || e.distinct >= e.maxTotal) return { verdict: 'complete' };
  const copies = e.confirmedCopies ?? null;
  if (copies !== null && e.distinct + copies >= e.maxTotal)
    return { verdict: 'complete', duplicates: copies };
  if (e.reads < MAX_SCAN_READS) return { verdict: 're-read' };
  if (e.copiesSeen)
    return {
      verdict: 'incomplete',
      reason: 'DUPLICATES_UNCONFIRMED',
      detail:
        `received ${e.distinct} distinct transfers of the ${e.maxTotal} the service reported, some listed more than once, ` +
        `after ${e.reads} reads: no two full reads listed the same ids and copies`,
    };
  return {
    verdict: 'incomplete',
    reason: 'TOTAL_SHORT',
    detail: `received ${e.distinct} distinct transfers of the ${e.maxTotal} the service reported, after ${e.reads} reads`,
  };
}

export interface TailEvidence {
  /** Every item read was in oldest-first order. */
  oldestFirst: boolean;
  /** Items on the first page read, and how many of those ids were already held before this read. */
  firstPageCount: number;
  firstPageKnown: number;
  /** The first page read came back with a different number of records than remembered (a new cap). */
  geometryChanged: boolean;
  /** Unsettled transfers held that this read did not see again. */
  unsettledMissed: number;
  /** Distinct ids held after this read, anonymous ones included. */
  held: number;
  maxTotal: number | null;
}

export type TailVerdict = { verdict: 'complete' } | { verdict: 'full-scan'; why: string };

/**
 * A tail read of an oldest-first list (from the page before the oldest unsettled transfer to the end)
 * proves nothing was lost when: the order held, its first page overlaps ids already held (it did not
 * start past records never seen), every unsettled transfer was seen again, and the distinct ids held
 * reach the service's `total` (bare arrays: paging ended on an empty page). Else: a full scan.
 */
export function decideTail(e: TailEvidence): TailVerdict {
  const fallBack = (why: string): TailVerdict => ({ verdict: 'full-scan', why });
  if (!e.oldestFirst) return fallBack('the list is no longer oldest-first');
  if (e.firstPageCount === 0)
    return fallBack('the list is shorter than remembered (first page read was empty)');
  if (e.geometryChanged) return fallBack('the service serves a different number of records per page');
  if (e.firstPageKnown === 0)
    return fallBack('the first page read holds no transfer already held: the list moved under the positions');
  if (e.unsettledMissed > 0)
    return fallBack(`${e.unsettledMissed} unsettled transfer(s) were not seen again: the list moved`);
  if (e.maxTotal !== null && e.held < e.maxTotal)
    return fallBack(`${e.held} distinct transfers held of the ${e.maxTotal} the service reported`);
  return { verdict: 'complete' };
}

/**
 * A newest-first read that stopped early is complete when, where the service sends a `total`, the
 * distinct ids held reach it; short of it (a transfer that appeared late with an old `createdAt`, past
 * where the read stopped) the list is scanned in full. Bare arrays give no total: the periodic
 * verification scan covers that case.
 */
export function decideNewestFirst(e: { held: number; maxTotal: number | null }): TailVerdict {
  if (e.maxTotal === null || e.held >= e.maxTotal) return { verdict: 'complete' };
  return {
    verdict: 'full-scan',
    why: `${e.held} distinct transfers held of the ${e.maxTotal} the service reported`,
  };
}

/** Order evidence of a read: whether every item so far was newest-first and/or oldest-first. */
export interface OrderSeen {
  descending: boolean;
  ascending: boolean;
  previous: number | null;
  oldest: number;
}

export function emptyOrder(): OrderSeen {
  return { descending: true, ascending: true, previous: null, oldest: Number.POSITIVE_INFINITY };
}

/** Pure: the order evidence after these `createdAt` values, in the order served. */
export function observeOrder(seen: OrderSeen, createdAts: readonly string[]): OrderSeen {
  let { descending, ascending, previous, oldest } = seen;
  for (const text of createdAts) {
    const t = Date.parse(text);
    if (previous !== null && t > previous) descending = false;
    if (previous !== null && t < previous) ascending = false;
    previous = t;
    oldest = Math.min(oldest, t);
  }
  return { descending, ascending, previous, oldest };
}

/** The order a whole read shows; a list in which every item has the same time shows none. */
export function orderOf(seen: OrderSeen): 'newest-first' | 'oldest-first' | 'unknown' {
  if (seen.descending && !seen.ascending) return 'newest-first';
  if (seen.ascending && !seen.descending) return 'oldest-first';
  return 'unknown';
}

/**
 * A newest-first read may stop once a page reaches a transfer created before `stopBefore` (checkpoint
 * minus lookback, or the oldest unsettled transfer), while every item so far was newest-first: nothing
 * older can follow.
 */
export function canStopNewestFirst(stopBefore: Date | null, seen: OrderSeen): boolean {
  return stopBefore !== null && seen.descending && seen.oldest < stopBefore.getTime();
}
