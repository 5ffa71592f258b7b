/**
 * What one full read listed, as evidence for records listed more than once (read-verdict.ts
 * `confirmedCopies`): its entries, distinct records, reported total, and a key of its ids and copies. The
 * key is worked out only for a read that listed a record twice (rare: it sorts the read's ids).
 */
import { createHash } from 'node:crypto';
import type { DistinctIds, Listing } from './read-verdict.js';

export interface ListedRead {
  ids: DistinctIds;
  /** Every listing received, copies included. */
  entries: number;
  /** Ids listed more than once, with how many listings beyond the first. */
  copies: ReadonlyMap<string, number>;
  maxTotal: number | null;
}

export function listingOf(read: ListedRead): Listing {
  const listing = { entries: read.entries, distinct: read.ids.size, total: read.maxTotal };
  if (read.copies.size === 0) return { ...listing, copiesKey: null };
  const hash = createHash('sha256');
  for (const id of [...read.ids.ids].sort()) hash.update(id).update('\u0000');
  hash.update(`\u0001${read.ids.anonymous}\u0001`);
  for (const [id, n] of [...read.copies].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
    hash.update(`${id}\u0000${n}\u0000`);
  return { ...listing, copiesKey: hash.digest('hex') };
}

/** Adds one listed id to a read's tally: a copy when the read already holds it. */
export function countListed(
  read: { ids: DistinctIds; entries: number; copies: Map<string, number> },
  id: string | null,
): void {
  read.entries += 1;
  if (id !== null && read.ids.ids.has(id)) read.copies.set(id, (read.copies.get(id) ?? 0) + 1);
  else read.ids.add(id);
}
