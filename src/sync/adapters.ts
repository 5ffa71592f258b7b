/** The adapters a run uses: the ones it was handed, else the PostgreSQL ones built on its pool. */
import { pgSyncWarehouse } from '../warehouse/sync-ports.js';
import { PgTransferMemory } from '../warehouse/transfer-positions.js';
import type { SyncContext } from './context.js';
import type { SyncWarehouse } from './ports.js';
import type { TransferMemory } from './transfer-state.js';

export function warehouseOf(ctx: SyncContext): SyncWarehouse {
  return ctx.warehouse ?? pgSyncWarehouse(ctx.pool, ctx.log);
}

export function transferMemoryOf(ctx: SyncContext): TransferMemory {
  return ctx.transferMemory ?? new PgTransferMemory(ctx.pool);
}
