/**
 * What the transfers sync remembers of the service's transfer list, as a port (the PostgreSQL adapter is
 * src/warehouse/transfer-positions.ts): the order the reads found, the page geometry, when the last full
 * scan completed, and per id the position it held. Losing it costs one full scan, which re-learns all of
 * it; it never decides that a record is not needed.
 */

/** The transfer list's order by `createdAt`, as the reads saw it. */
export type ListOrder = 'newest-first' | 'oldest-first' | 'unknown';

export interface TransferList {
  order: ListOrder;
  /** The page size requested by the reads the positions come from. */
  pageSize: number;
  /** Records per page as the service served them (a silent cap shows here): page k starts at k × this. */
  servedSize: number;
  /** Records without a usable id in the last full scan: they count towards `total` but have no position. */
  anonymous: number;
  lastFullScanAt: Date | null;
}

export interface PositionEntry {
  id: string;
  position: number;
}

/** The unsettled transfers the warehouse holds (within the settle horizon), with their remembered places. */
export interface UnsettledTransfers {
  ids: string[];
  oldestAt: Date | null;
  /** The smallest remembered position among them, null when none has one. */
  oldestPosition: number | null;
  /** How many have no remembered position (loaded before positions were kept): a tail read cannot vouch for them. */
  unpositioned: number;
}

export interface TransferMemory {
  list(source: string): Promise<TransferList | null>;
  saveList(source: string, list: TransferList, at: Date): Promise<void>;
  remember(source: string, entries: readonly PositionEntry[], at: Date): Promise<void>;
  /** How many of these ids have a remembered position. */
  known(source: string, ids: readonly string[]): Promise<number>;
  /** Distinct ids held: every id some read saw and no complete full scan has since missed. */
  held(source: string): Promise<number>;
  /** After a complete full scan: forgets ids no read saw since `before` (deleted from the list). */
  forgetUnseen(source: string, before: Date): Promise<number>;
  unsettled(source: string, since: Date): Promise<UnsettledTransfers>;
}
