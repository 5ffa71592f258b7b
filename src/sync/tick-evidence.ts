/**
 * What a live tick gathers before it decides (tick-plan.ts, transfers-plan.ts): where the last tick
 * stopped, what the last probe allows, which older days still hold unsettled payments and which of them
 * were read lately, and what the transfers sync remembers of the list. Reads only, with one repair: a
 * checkpoint Redis lost is rebuilt from the durable sync log and written back (PRODUCT.md principle 4).
 */
import { loadLatestFindings } from '../probe/findings-store.js';
import { cheaperSyncHints, type SyncHints } from '../probe/hints.js';
import type { Stream } from '../upstream/schemas.js';
import type { TickDeps } from './context.js';
import { checkpointFromLog } from './tick-plan.js';
import type { UnsettledTransfers, TransferList } from './transfer-state.js';
import { dayWindow } from './windows.js';

/** The checkpoint; when Redis lost it, the one the sync log implies, written back. */
export async function currentCheckpoint(deps: TickDeps, stream: Stream): Promise<Date | null> {
  const { source, checkpoints, log } = deps;
  const state = await checkpoints.get(source.name, stream);
  if (state.checkpoint || !(await checkpoints.isMissing(source.name, stream))) return state.checkpoint;
  const logged = await deps.warehouse.completedWindows(source.name, stream);
  const rebuilt = checkpointFromLog(logged, deps.settings.SETTLE_LAG);
  if (rebuilt) {
    await checkpoints.reset(source.name, stream, rebuilt);
    // info, not a warning: nothing is wrong and nothing is to be done. Redis held no checkpoint (the
    // first live tick after a backfill, or Redis lost its data, which the worker's re-fill reports), and
    // the durable log says where to resume (PRODUCT.md principle 4).
    log.info(
      { source: source.name, stream, checkpoint: rebuilt.toISOString() },
      'checkpoint taken from the sync log (Redis held none)',
    );
  }
  return rebuilt;
}

/** What the last probe allows to make sync cheaper (never what could lose a record: see probe/hints.ts). */
async function syncHints(deps: TickDeps): Promise<SyncHints> {
  const findings = await loadLatestFindings(
    { redis: deps.redis, pool: deps.pool, prefix: deps.settings.PAYSYNC_QUEUE_PREFIX },
    deps.source.name,
  ).catch(() => null);
  return cheaperSyncHints(findings);
}

/** Before the live payments read: the probe's hints, the tick's instant, the checkpoint. */
export async function gatherPaymentsStart(
  deps: TickDeps,
): Promise<{ hints: SyncHints; now: Date; checkpoint: Date | null }> {
  const hints = await syncHints(deps);
  const now = deps.now();
  return { hints, now, checkpoint: await currentCheckpoint(deps, 'payments') };
}

/**
 * After the live read (what it loaded may have settled some of them): the local days holding payments
 * still unsettled, created in [now − SETTLE_HORIZON, from), and which of those days' windows were read
 * completely since now − REVISIT_EVERY (as `startMs/endMs`).
 */
export async function gatherUnsettledDays(
  deps: TickDeps,
  from: Date,
  now: Date,
): Promise<{ days: string[]; fresh: Set<string> }> {
  const { settings, source, warehouse } = deps;
  const zone = settings.REPORT_TIMEZONE;
  const horizon = new Date(now.getTime() - settings.SETTLE_HORIZON);
  const days = await warehouse.nonFinalDays(source.name, 'payments', zone, from, horizon);
  if (days.length === 0) return { days, fresh: new Set() };
  const since = new Date(now.getTime() - settings.REVISIT_EVERY);
  const windows = days.map((d) => dayWindow(d, zone));
  return { days, fresh: await warehouse.freshWindows(source.name, 'payments', since, windows) };
}

export interface TransfersEvidence {
  now: Date;
  unsettled: UnsettledTransfers;
  list: TransferList | null;
  checkpoint: Date | null;
  /** Distinct ids held (with positions). */
  held: number;
  /** The organisation the source's transfers belong to: the interface gives none, its payments do. */
  organizationId: string | null;
}

/** Before a transfers read: what the sync remembers of the list and of the unsettled transfers. */
export async function gatherTransfers(deps: TickDeps): Promise<TransfersEvidence> {
  const { settings, source, transferMemory: memory } = deps;
  const now = deps.now();
  const unsettled = await memory.unsettled(source.name, new Date(now.getTime() - settings.SETTLE_HORIZON));
  const list = await memory.list(source.name);
  const checkpoint = await currentCheckpoint(deps, 'transfers');
  const held = await memory.held(source.name);
  const organizationId = await deps.warehouse.organisationOf(source.name);
  return { now, unsettled, list, checkpoint, held, organizationId };
}
