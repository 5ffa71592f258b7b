/** The PostgreSQL adapter of the sync core's warehouse port (src/sync/ports.ts). */
import type pg from 'pg';
import type { SyncWarehouse } from '../sync/ports.js';
import { finishItem, startItem } from './backfill-store.js';
import { loadPage, recordWindow } from './loader.js';
import { completedWindows, contradictedIds, freshWindows, nonFinalDays } from './sync-log.js';
import { organisationOfSource } from './transfer-positions.js';

export function pgSyncWarehouse(pool: pg.Pool): SyncWarehouse {
  return {
    loadPage: (page, log) => loadPage(pool, page, log),
    recordWindow: (row) => recordWindow(pool, row),
    completedWindows: (source, stream) => completedWindows(pool, source, stream),
    nonFinalDays: (source, stream, zone, olderThan, horizon) =>
      nonFinalDays(pool, source, stream, zone, olderThan, horizon),
    freshWindows: (source, stream, since, windows) => freshWindows(pool, source, stream, since, windows),
    contradictedIds: (source, stream) => contradictedIds(pool, source, stream),
    organisationOf: (source) => organisationOfSource(pool, source),
    startBackfillItem: (backfillId, key) => startItem(pool, backfillId, key),
    finishBackfillItem: (backfillId, key, verdict) => finishItem(pool, backfillId, key, verdict),
  };
}
