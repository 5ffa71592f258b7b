/**
 * How a list is laid out before it is cut into pages, and which positions of it a page serves: the
 * page-level anomalies a service can show within its interface (records listed twice, pages past the
 * end, cycles, trickles), as pure functions of the list's length and the switches.
 *
 * A listing position maps to an index of the selected records and says whether it is a record's second
 * listing. A page is `count` positions from `start`, taken round the listing (`(start + i) % length`),
 * which lets one shape describe normal pages, repeats and endless wraps.
 */
import type { PastEnd } from './types.js';

export interface Listing {
  readonly length: number;
  /** Index into the selected records of the record at this position. */
  source(position: number): number;
  /** Whether this position holds the record's second listing. */
  isCopy(position: number): boolean;
}

/** Every record once, in order: the plain list. */
export function plainListing(length: number): Listing {
  return { length, source: (position) => position, isCopy: () => false };
}

/**
 * Every record once, and those for which `listedTwice` holds a second time, after `offset - 1` other
 * records of the list (1: right after the original); a copy that would fall past the end comes last.
 */
export function listingWithCopies(
  length: number,
  listedTwice: (index: number) => boolean,
  offset: number,
): Listing {
  const after = new Map<number, number[]>();
  for (let i = 0; i < length; i++) {
    if (!listedTwice(i)) continue;
    const slot = Math.min(i + offset - 1, length - 1);
    const bucket = after.get(slot);
    if (bucket) bucket.push(i);
    else after.set(slot, [i]);
  }
  const copies = [...after.values()].reduce((n, b) => n + b.length, 0);
  const sources = new Int32Array(length + copies);
  const copy = new Uint8Array(length + copies);
  let at = 0;
  for (let i = 0; i < length; i++) {
    sources[at++] = i;
    for (const original of after.get(i) ?? []) {
      sources[at] = original;
      copy[at++] = 1;
    }
  }
  return {
    length: sources.length,
    source: (position) => sources[position] as number,
    isCopy: (position) => copy[position] === 1,
  };
}

/**
 * Every record once, but for those for which `listedTwice` holds, whose second listing takes the place of
 * the record `offset` after it (that record is not listed): the listing keeps its length. A copy that
 * would fall past the end, or on a record itself listed twice or already displaced, is not made.
 */
export function listingWithCopiesInPlace(
  length: number,
  listedTwice: (index: number) => boolean,
  offset: number,
): Listing & { displaced: ReadonlyMap<number, number> } {
  const sources = Int32Array.from({ length }, (_, i) => i);
  const copy = new Uint8Array(length);
  const displaced = new Map<number, number>(); // original index → displaced index
  for (let i = 0; i < length; i++) {
    const at = i + offset;
    if (!listedTwice(i) || at >= length || copy[at] === 1 || listedTwice(at)) continue;
    sources[at] = i;
    copy[at] = 1;
    displaced.set(i, at);
  }
  return {
    length,
    source: (position) => sources[position] as number,
    isCopy: (position) => copy[position] === 1,
    displaced,
  };
}

export interface PagingAnomalies {
  pastEnd: PastEnd;
  pageCycle: { after: number; back: number } | null;
  trickle: number | null;
}

/** Positions `(start + i) % length` for i < count. */
export interface PagePlan {
  start: number;
  count: number;
}

/** The page actually served for a requested page under `pageCycle`. */
export function cycledPage(page: number, cycle: PagingAnomalies['pageCycle']): number {
  if (cycle === null || page < cycle.after) return page;
  return cycle.back + ((page - cycle.after) % (cycle.after - cycle.back));
}

/** The positions page `page` of `size` serves from a listing of `length`. */
export function pagePlan(length: number, page: number, size: number, a: PagingAnomalies): PagePlan {
  const p = cycledPage(page, a.pageCycle);
  const start = p === 0 || a.trickle === null ? p * size : p * a.trickle;
  if (start < length) return { start, count: Math.min(size, length - start) };
  if (length === 0 || a.pastEnd === 'empty') return { start: length, count: 0 };
  if (a.pastEnd === 'repeat-last') {
    const count = Math.min(size, length);
    return { start: length - count, count };
  }
  return { start: start % length, count: size };
}

/**
 * The last few listings built, by identity of what they were built from (the selected array, its
 * bounds, the store's version, the switches): paging through a list with copies lays it out once.
 */
export class ListingCache {
  private entries: { key: readonly unknown[]; listing: Listing }[] = [];

  get(key: readonly unknown[], build: () => Listing): Listing {
    const hit = this.entries.find((e) => e.key.every((part, i) => part === key[i]));
    if (hit) return hit.listing;
    const listing = build();
    this.entries = [{ key, listing }, ...this.entries.slice(0, 3)];
    return listing;
  }
}
