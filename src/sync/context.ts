/**
 * What a sync run is handed: its I/O adapters and the settings it needs. The run itself imports no pool,
 * client, Redis connection or adapter of its own (STYLE.md: pure core, thin adapters, passed in): the
 * composition root (src/runtime.ts) builds them and wires them in.
 */
import type { Redis } from 'ioredis';
import type { Pool } from 'pg';
import type { Logger } from '../log.js';
import type { Settings, Source } from '../config/settings.js';
import type { UpstreamClient } from '../upstream/client.js';
import type { Stream } from '../upstream/schemas.js';
import type { CheckpointStore } from './checkpoints.js';
import type { Circuit } from './circuit.js';
import type { TransferMemory } from './transfer-state.js';
import type { SyncWarehouse } from './ports.js';
import type { ReasonCode } from './window-reasons.js';

export interface SyncOptions {
  /** Requested page size (the service may cap it). */
  pageSize: number;
  /** Padding on each side of a window's request (the bound-inclusivity open point). */
  padMs: number;
  /** A window reporting more pages than this is split into sub-windows. */
  maxPagesPerWindow: number;
  /** Hard ceiling of pages in one read, whatever the service says. */
  maxPagesPerRead: number;
  /** How many times a window is cut in two when it keeps falling short of the reported total. */
  maxSplitDepth: number;
  /** A record time later than the sync clock plus this is impossible (FUTURE_TOLERANCE). */
  futureToleranceMs: number;
  /**
   * A live tick reads the days before its checkpoint only as far as the evidence requires (lookback.ts);
   * false reads them in full every tick (the benchmark's baseline).
   */
  lookbackByEvidence: boolean;
}

export const DEFAULT_SYNC_OPTIONS: SyncOptions = {
  pageSize: 100,
  padMs: 60_000,
  maxPagesPerWindow: 50,
  maxPagesPerRead: 10_000,
  maxSplitDepth: 3,
  futureToleranceMs: 86_400_000,
  lookbackByEvidence: true,
};

export interface WindowReport {
  source: string;
  stream: 'payments' | 'transfers';
  window: string;
  kind: string;
  pages: number;
  records: number;
  rejects: number;
  reportedTotal: number | null;
  distinct: number;
  reads: number;
  /** `incomplete`: the reads ran and the evidence fell short; `failed`: an error ended the run. */
  outcome: 'complete' | 'incomplete' | 'failed';
  /** Why it is not complete: a code of window-reasons.ts; null when complete. */
  reasonCode: ReasonCode | null;
  ms: number;
}

/** The incomplete marks `status` shows (CheckpointStore is the Redis adapter). */
export interface IncompleteMarkers {
  markIncomplete(source: string, stream: Stream, window: string, detail: string): Promise<void>;
  clearIncomplete(source: string, stream: Stream, window: string): Promise<void>;
  get(source: string, stream: Stream): Promise<{ incompleteWindows: Array<{ window: string }> }>;
}

export interface SyncContext {
  source: Source;
  client: UpstreamClient;
  /** The source's circuit breaker (absent: never open, no probes). */
  circuit?: Circuit;
  /** The warehouse pool (the probe's findings, read for the tick's hints, are kept there). */
  pool: Pool;
  /** The warehouse operations of the sync core (the root wires the PostgreSQL adapter). */
  warehouse: SyncWarehouse;
  log: Logger;
  options: SyncOptions;
  /** Called once per finished window (metrics, progress). */
  onWindow?: (report: WindowReport) => void;
  /** The clock of sync decisions and of the times the sync log records (default: the wall clock). */
  now?: () => Date;
  /** Where incomplete reads are marked and, once a later complete read covers them, cleared. */
  checkpoints?: IncompleteMarkers;
  /** What the transfers sync remembers of the list (the root wires the PostgreSQL adapter). */
  transferMemory: TransferMemory;
  /**
   * How many pages of a payments window may be requested at once once the service said how many there
   * are (the source's in-flight limit: request-pacer.ts); absent: one page at a time.
   */
  pagesAhead?: () => number;
  /**
   * A turn to read a backfill window that answers with bare arrays past its first page:
   * resolves when the window may go on, with the function that ends its turn. Without a `total` such a
   * window cannot be split before it is read, so it is read whole, twice, and holds its ids (a day's, up to
   * 100k) until its verdict; the turns bound how many do so at once in this process (window-run.ts).
   * Absent: no bound.
   */
  bareWindowTurn?: () => Promise<() => void>;
}

/** What a live tick, or a backfill item, is handed besides: the settings, the checkpoints, Redis, the clock. */
export interface TickDeps extends SyncContext {
  settings: Settings;
  checkpoints: CheckpointStore;
  redis: Redis;
  now: () => Date;
}

/** The sync clock: `now` when given, else the wall clock. */
export function clockOf(ctx: Pick<SyncContext, 'now'>): Date {
  return ctx.now?.() ?? new Date();
}
