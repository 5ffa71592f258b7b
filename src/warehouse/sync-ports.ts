/** The PostgreSQL adapter of the sync core's warehouse port (src/sync/ports.ts). */
import type pg from 'pg';
import type { Logger } from '../log.js';
import type { SyncWarehouse } from '../sync/ports.js';
import { loadPage, recordWindow } from './loader.js';
import { completedWindows, freshWindows, nonFinalDays } from './sync-log.js';
import { organisationOfSource } from './transfer-positions.js';

/** `log` receives the loader's warnings (a final status going back, a record it could not store). */
export function pgSyncWarehouse(pool: pg.Pool, log: Logger): SyncWarehouse {
  return {
    loadPage: (page) => loadPage(pool, page, log),
    recordWindow: (row) => recordWindow(pool, row),
    completedWindows: (source, stream) => completedWindows(pool, source, stream),
    nonFinalDays: (source, stream, zone, olderThan, horizon) =>
      nonFinalDays(pool, source, stream, zone, olderThan, horizon),
    freshWindows: (source, stream, since, windows) => freshWindows(pool, source, stream, since, windows),
    organisationOf: (source) => organisationOfSource(pool, source),
  };
}
