/**
 * What a command runs on: the services the composition root (src/runtime.ts) builds once from settings.
 * Declared here, in the core's terms, so that the layers that take it (the probe, reconcile, ops) never
 * reach up to the root that builds it; only the CLI and jobs/ call the root.
 */
import type { Redis } from 'ioredis';
import type { Pool } from 'pg';
import type { Settings, Source } from '../config/settings.js';
import type { Logger } from '../log.js';
import type { UpstreamClient } from '../upstream/client.js';
import type { CheckpointStore } from './checkpoints.js';
import type { SyncOptions, WindowReport } from './context.js';
import type { SyncWarehouse } from './ports.js';
import type { RequestPacer } from './request-pacer.js';
import type { TickDeps } from './context.js';

export interface Runtime {
  settings: Settings;
  log: Logger;
  pool: Pool;
  redis: Redis;
  checkpoints: CheckpointStore;
  syncOptions: SyncOptions;
  /** The sync core's warehouse port, wired to PostgreSQL. */
  warehouse: SyncWarehouse;
  client(source: Source): UpstreamClient;
  syncContext(source: Source, onWindow?: (r: WindowReport) => void): TickDeps;
  /** Each source's request pacer, by source name, once its client was made (in-flight limit, latency). */
  pacers(): ReadonlyMap<string, RequestPacer>;
  /** The clock of sync and export decisions: the wall clock, or the simulator's in tests. */
  now(): Date;
  close(): Promise<void>;
}
