/**
 * The few warehouse operations the sync core needs, as one port, and the terms it speaks (STYLE.md: pure
 * core, thin adapters, passed in). The core declares them; the PostgreSQL adapter
 * (src/warehouse/sync-ports.ts) implements them, and the composition root (src/runtime.ts) hands a run
 * one through `SyncContext.warehouse`. Nothing here imports the warehouse.
 */
import type { Logger } from '../log.js';
import type { Payment, RejectedRecord, Stream, Transfer } from '../upstream/schemas.js';
import type { LoggedWindow } from './checkpoint-rebuild.js';

export interface SyncWarehouse {
  /**
   * One page's rows, rejects and status history, committed together (idempotent); its `rejects`
   * include records the loader itself quarantined. Its warnings (a final status going back, a record it
   * could not store) go to `log`, the run's own logger.
   */
  loadPage(page: PageLoad, log: Logger): Promise<LoadResult>;
  /** A window's verdict in the durable sync log, after its rows are committed. */
  recordWindow(row: SyncWindowRow): Promise<void>;
  /** Windows whose latest run completed (checkpoint rebuild). */
  completedWindows(source: string, stream: Stream): Promise<CompletedWindow[]>;
  /** Local days holding non-final records created in [horizonStart, olderThan). */
  nonFinalDays(
    source: string,
    stream: Stream,
    timeZone: string,
    olderThan: Date,
    horizonStart: Date,
  ): Promise<string[]>;
  /** Of these windows, the ones (`startMs/endMs`) completed after `since`. */
  freshWindows(
    source: string,
    stream: Stream,
    since: Date,
    windows: ReadonlyArray<{ start: Date; end: Date }>,
  ): Promise<Set<string>>;
  /**
   * Ids whose open rejects say the service lists them in contradicting copies (sync/copies.ts): each read
   * holds all their copies and judges them together. Optional: none without it.
   */
  contradictedIds?(source: string, stream: Stream): Promise<string[]>;
  /** The organisation a source's transfers belong to (the interface gives none). */
  organisationOf(source: string): Promise<string | null>;
  /** Marks a backfill item started; false when it must not run (finished already, or its backfill cancelled). */
  startBackfillItem(backfillId: number, key: string): Promise<boolean>;
  /** A backfill item's verdict (and its backfill's, when it was the last one open), after its rows commit. */
  finishBackfillItem(backfillId: number, key: string, verdict: ItemVerdict): Promise<void>;
}

export interface PageLoad {
  source: string;
  stream: 'payments' | 'transfers';
  /** The source's organisation: stored on transfers, which carry none. Ignored for payments. */
  organizationId: string | null;
  records: Payment[] | Transfer[];
  rejects: RejectedRecord[];
  /** Written in the same statement: a window is marked only once its last page is committed. */
  window?: SyncWindowRow;
}

/**
 * Counts over distinct ids of the page. `rejects` includes records moved to rejects by the loader (the
 * warehouse cannot store them, same-updatedAt conflicts, or the database refused them);
 * `anomalies` counts final → non-final status moves.
 */
export interface LoadResult {
  inserted: number;
  updated: number;
  unchanged: number;
  stale: number;
  rejects: number;
  anomalies: number;
}

/** A row of the durable sync log: what one read of a window or scan found (records, rejects, verdict). */
export interface SyncWindowRow {
  source: string;
  stream: 'payments' | 'transfers';
  windowStart: Date;
  windowEnd: Date;
  kind: 'live' | 'backfill' | 'revisit' | 'scan';
  fetchedAt: Date;
  records: number;
  rejects: number;
  reportedTotal: number | null;
  pages: number;
  outcome: 'complete' | 'incomplete' | 'failed';
  detail?: string | null;
  /** Why the run was not complete: a code of window-reasons.ts (required unless complete). */
  reasonCode?: string | null;
  /** Whether this failure counts towards BLOCKED_AFTER (window-reasons.ts `blocksDay`; outages do not). */
  blocksDay?: boolean;
  /** Copies beyond the first of records listed more than once, confirmed by two reads. */
  duplicates?: number;
  /** Codes of the anomalies (notes) this run saw. */
  anomalies?: string[];
}

/** A window whose latest run completed, as the sync log holds it. */
export interface CompletedWindow extends LoggedWindow {
  fetchedAt: Date;
  /** live, revisit, backfill or scan. */
  kind: string;
}

/** How a backfill item ended. */
export interface ItemVerdict {
  state: 'done' | 'failed';
  records: number | null;
  detail: string | null;
}
