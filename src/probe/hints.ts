/**
 * The only uses of probe findings that make sync cheaper without risking a record. Everything else the
 * probe measures (bounds inclusivity, whether transfers filter on dates, the shape) is shown to ops but
 * never relied on: sync already pads windows and accepts both shapes, so a wrong finding there could only
 * lose records and would save little.
 */
import type { Findings } from './findings.js';

export interface SyncHints {
  /**
   * Open point "ordering": the transfer list looked newest-first, so a transfers read may stop early once
   * past the checkpoint. Safe because the sync verifies the order on every page it reads and falls back
   * to a full read when it does not hold: a wrong hint costs one full read, never a record.
   */
  transfersNewestFirst: boolean;
  /**
   * Open point "maximum page size": a page size the service was seen to serve in full. Never above a
   * measured cap (a bare-array page cut by a cap looks like the end of the list), and never above
   * PAGE_SIZE_HINT_CEILING (huge pages cost memory and time out).
   */
  pageSize?: number;
  /**
   * The payment lists were seen to honour `status`: a live tick's lookback reads the open records by
   * status instead of whole days (src/sync/lookback-plan.ts). Safe because every filtered page is checked
   * (a record of another status means a full read), and a record that left INIT or PENDING is read on its
   * own: a wrong hint costs a full read, never a record.
   */
  statusFilter?: boolean;
}

export const PAGE_SIZE_HINT_CEILING = 1000;

function pageSizeHint(f: Findings): number | undefined {
  // A page of this size came back full and was not cut, so the service serves at least this many.
  const proven = f.maxPageSize ?? f.pageSizeServed;
  if (proven === null) return undefined;
  return Math.min(proven, PAGE_SIZE_HINT_CEILING);
}

export function cheaperSyncHints(f: Findings | null): SyncHints {
  if (!f) return { transfersNewestFirst: false };
  const pageSize = pageSizeHint(f);
  return {
    transfersNewestFirst: f.transferOrder === 'desc',
    ...(f.paymentsHonourStatus === true ? { statusFilter: true } : {}),
    ...(pageSize !== undefined ? { pageSize } : {}),
  };
}
