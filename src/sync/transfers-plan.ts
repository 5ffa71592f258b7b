/**
 * Which read of the transfer list a tick makes, decided from what earlier reads learnt. Pure.
 *
 * The promise: after a tick, every transfer the service listed before it began is in the warehouse with
 * the status the service showed. The list has no date filter and its order is an open point, so:
 * - newest-first: read from page 0 until past the checkpoint minus the lookback and the oldest unsettled
 *   transfer (new transfers come first, the unsettled ones are within that span);
 * - oldest-first: new transfers are at the end and the unsettled ones at remembered positions: read from
 *   the page before the one holding the oldest unsettled transfer to the end (the run proves nothing was
 *   lost, else scans in full in the same tick);
 * - unknown or unstable: a full scan every tick, unless TRANSFERS_UNORDERED_SCAN_EVERY allows them less
 *   often (then transfers may be that stale, and `transfersStaleness` says so);
 * - whatever the order, a full verification scan every TRANSFERS_FULL_SCAN_EVERY catches what the
 *   shortcuts cannot see (a deleted transfer, a list that reordered itself).
 */
import type { ListOrder, TransferList } from './transfer-state.js';

export type TransfersRead =
  | { mode: 'newest-first'; stopBefore: Date; why: string }
  | { mode: 'tail'; startPage: number; skipped: number; why: string }
  | { mode: 'full'; why: string }
  | { mode: 'skip'; why: string };

export interface TransfersPlanInput {
  now: Date;
  /** What the reads learnt; null when nothing is remembered (first run, or memory lost). */
  list: TransferList | null;
  checkpoint: Date | null;
  /** The page size this tick requests. */
  pageSize: number;
  unsettled: { oldestAt: Date | null; oldestPosition: number | null; unpositioned: number };
  /** Distinct ids held (with positions). */
  held: number;
  lookbackMs: number;
  fullScanEveryMs: number;
  unorderedScanEveryMs: number;
}

function verificationDue(i: TransfersPlanInput): boolean {
  const last = i.list?.lastFullScanAt;
  return !last || i.now.getTime() - last.getTime() >= i.fullScanEveryMs;
}

export function planTransfersRead(i: TransfersPlanInput): TransfersRead {
  if (!i.list?.lastFullScanAt) return { mode: 'full', why: 'no complete full scan remembered' };
  if (verificationDue(i)) return { mode: 'full', why: 'verification scan (TRANSFERS_FULL_SCAN_EVERY)' };
  const order: ListOrder = i.list.order;
  if (order === 'newest-first') return planNewestFirst(i);
  if (order === 'oldest-first') return planTail(i, i.list);
  const last = i.list.lastFullScanAt;
  if (i.unorderedScanEveryMs > 0 && i.now.getTime() - last.getTime() < i.unorderedScanEveryMs) {
    return { mode: 'skip', why: 'order unknown; full scans every TRANSFERS_UNORDERED_SCAN_EVERY' };
  }
  return { mode: 'full', why: 'order unknown: only a full scan sees every change' };
}

function planNewestFirst(i: TransfersPlanInput): TransfersRead {
  if (!i.checkpoint) return { mode: 'full', why: 'newest-first but no checkpoint yet' };
  const lookback = i.checkpoint.getTime() - i.lookbackMs;
  const stopBefore = new Date(Math.min(lookback, i.unsettled.oldestAt?.getTime() ?? lookback));
  return { mode: 'newest-first', stopBefore, why: 'newest-first' };
}

function planTail(i: TransfersPlanInput, list: TransferList): TransfersRead {
  if (list.pageSize !== i.pageSize)
    return { mode: 'full', why: 'the page size changed since the positions were taken' };
  if (i.unsettled.unpositioned > 0)
    return {
      mode: 'full',
      why: `${i.unsettled.unpositioned} unsettled transfer(s) have no remembered position`,
    };
  // The page before the one holding the oldest unsettled transfer (or, with none, the last record):
  // one page of slack for records deleted before it, and the overlap the run checks.
  const anchor = i.unsettled.oldestPosition ?? Math.max(0, i.held - 1);
  const startPage = Math.max(0, Math.floor(anchor / list.servedSize) - 1);
  if (startPage === 0) return { mode: 'full', why: 'oldest-first, but the tail starts at page 0' };
  return { mode: 'tail', startPage, skipped: startPage * list.servedSize, why: 'oldest-first tail' };
}

/**
 * How stale the warehouse's transfers may be for this source, in milliseconds, or null when every tick
 * reads them current. Only an unknown order with TRANSFERS_UNORDERED_SCAN_EVERY set is stale: up to that
 * span plus one tick (for `status` and docs/architecture.md).
 */
export function transfersStaleness(
  list: TransferList | null,
  settings: { TRANSFERS_UNORDERED_SCAN_EVERY: number; SYNC_EVERY: number },
): number | null {
  if (!list || list.order !== 'unknown' || settings.TRANSFERS_UNORDERED_SCAN_EVERY === 0) return null;
  return settings.TRANSFERS_UNORDERED_SCAN_EVERY + settings.SYNC_EVERY;
}
