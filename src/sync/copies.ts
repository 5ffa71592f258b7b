/**
 * Copies of one record that contradict each other on different pages of a list (the interface promises no
 * unique ids): the rule already used within a page (warehouse/page-prep.ts), applied across the pages of
 * a read. The newer `updatedAt` wins; copies that differ at the newest `updatedAt` are a tie, and which is
 * true cannot be known, so none is written. Either way every distinct version goes to `sync_rejects` (and
 * the day's rejects.csv) with the reason, and stays there while the service keeps listing them.
 *
 * A read cannot keep every record it loads to compare with a later copy, so the copies are gathered by
 * id: a read holds back the later copies of an id it already saw (read-window.ts), the next read of the
 * window holds every copy of those ids, and the ids the rejects hold as contradicted are held from the
 * first read on. Pure.
 */
import { toExactJson } from '../upstream/exact-json.js';
import type { Payment, RejectedRecord } from '../upstream/schemas.js';

/** How a contradiction's reject reason starts (the warehouse finds the ids still contradicted by it). */
export const CONTRADICTING_REASON = 'contradicting copies';

export interface CopiesVerdict {
  /** The version to write (null: a tie, none). */
  keep: Payment | null;
  /** Every distinct version, with the reason, when they contradict each other; else none. */
  rejects: RejectedRecord[];
}

function differingFields(versions: readonly Payment[]): string[] {
  const first = versions[0] as unknown as Record<string, unknown>;
  const names = Object.keys(first).filter((k) =>
    versions.some((v) => toExactJson((v as unknown as Record<string, unknown>)[k]) !== toExactJson(first[k])),
  );
  return names.length > 0 ? names : ['fields'];
}

/** The verdict on every copy of one id a read listed (at least one). */
export function judgeCopies(copies: readonly Payment[]): CopiesVerdict {
  const versions = [...new Map(copies.map((c) => [toExactJson(c), c])).values()];
  if (versions.length === 1) return { keep: versions[0] as Payment, rejects: [] };
  const newest = Math.max(...versions.map((v) => Date.parse(v.updatedAt)));
  const top = versions.filter((v) => Date.parse(v.updatedAt) === newest);
  const fields = differingFields(versions).join(', ');
  const id = (versions[0] as Payment).id;
  const listed = `${CONTRADICTING_REASON}: id listed ${copies.length} times in one read in ${versions.length} versions (${fields} differ)`;
  const reason =
    top.length === 1
      ? `${listed}; the newer updatedAt (${(top[0] as Payment).updatedAt}) is kept`
      : `${listed} with the same newest updatedAt; which copy is true cannot be known, none is kept`;
  return {
    keep: top.length === 1 ? (top[0] as Payment) : null,
    rejects: versions.map((raw) => ({ raw, reason, id })),
  };
}
