/**
 * The few warehouse operations the sync core needs, as one port (STYLE.md: pure core, thin adapters,
 * passed in). The PostgreSQL adapter is src/warehouse/sync-ports.ts; a run is handed one through
 * `SyncContext.warehouse`, or gets it built on `SyncContext.pool`.
 */
import type { LoggedWindow } from '../warehouse/sync-log.js';
import type { LoadResult, PageLoad, SyncWindowRow } from '../warehouse/loader.js';
import type { Stream } from '../upstream/schemas.js';

export interface SyncWarehouse {
  /** One page's rows, rejects and status history, committed together (idempotent). */
  /** Loads a page; its `rejects` include records the loader itself quarantined. */
  loadPage(page: PageLoad): Promise<LoadResult>;
  /** A window's verdict in the durable sync log, after its rows are committed. */
  recordWindow(row: SyncWindowRow): Promise<void>;
  /** Windows whose latest run completed (checkpoint rebuild). */
  completedWindows(source: string, stream: Stream): Promise<LoggedWindow[]>;
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
  /** The organisation a source's transfers belong to (the interface gives none). */
  organisationOf(source: string): Promise<string | null>;
}
