/**
 * Transfers have no date filter in the interface: the list can only be read whole, from page 0.
 *
 * The service's ordering is an open point, so it is detected from what comes back. While every item read
 * so far is newest-first by `createdAt`, a `newest-first` run stops at the first page that reaches past
 * `stopBefore` (checkpoint minus lookback, or the oldest transfer still unsettled): nothing older can
 * follow. The moment the order breaks, the run reads to the end instead. A full scan counts as complete
 * when the distinct ids reach the service's `total` (where it sends one) and paging ended on evidence.
 */
import { loadPage, recordWindow } from '../warehouse/loader.js';
import { ENDPOINTS } from '../upstream/client.js';
import { readPages, type PageRead, type PagingSummary } from '../upstream/paging.js';
import { validateTransfers } from '../upstream/schemas.js';
import type { SyncContext, WindowReport } from './context.js';

export interface TransfersPlan {
  mode: 'newest-first' | 'full';
  /** Newest-first runs stop once a page reaches a transfer created before this instant. */
  stopBefore: Date | null;
  organizationId: string | null;
}

export interface TransfersResult extends WindowReport {
  /** Whether every item read was in newest-first order (the ordering finding). */
  newestFirst: boolean;
  stoppedEarly: boolean;
  detail: string | null;
}

interface ScanState {
  ids: Set<string>;
  anonymous: number;
  records: number;
  rejects: number;
  pages: number;
  maxTotal: number | null;
  newestFirst: boolean;
  previous: number;
  oldestSeen: number;
}

function observeOrder(state: ScanState, createdAts: string[]): void {
  for (const text of createdAts) {
    const t = Date.parse(text);
    if (t > state.previous) state.newestFirst = false;
    state.previous = t;
    state.oldestSeen = Math.min(state.oldestSeen, t);
  }
}

function tallyPage(state: ScanState, page: PageRead, ids: string[], rejectIds: (string | null)[]): void {
  state.pages += 1;
  if (page.total !== null) state.maxTotal = Math.max(state.maxTotal ?? 0, page.total);
  for (const id of ids) state.ids.add(id);
  for (const id of rejectIds) {
    if (id === null) state.anonymous += 1;
    else state.ids.add(id);
  }
  state.records += ids.length;
  state.rejects += rejectIds.length;
}

export async function runTransfers(ctx: SyncContext, plan: TransfersPlan): Promise<TransfersResult> {
  const started = Date.now();
  const { client, pool, source, options } = ctx;
  const pages = readPages((page) => client.listTransfers({ page, size: options.pageSize }), {
    size: options.pageSize,
    maxPages: options.maxPagesPerRead,
    endpoint: ENDPOINTS.transfers,
    source: source.name,
  });
  const state: ScanState = {
    ids: new Set(),
    anonymous: 0,
    records: 0,
    rejects: 0,
    pages: 0,
    maxTotal: null,
    newestFirst: true,
    previous: Number.POSITIVE_INFINITY,
    oldestSeen: Number.POSITIVE_INFINITY,
  };
  let stoppedEarly = false;
  for (;;) {
    const next: IteratorResult<PageRead, PagingSummary> = await pages.next();
    if (next.done) break;
    const { valid, rejects } = validateTransfers(next.value.items);
    observeOrder(
      state,
      valid.map((t) => t.createdAt),
    );
    tallyPage(
      state,
      next.value,
      valid.map((t) => t.id),
      rejects.map((r) => r.id),
    );
    const loaded = await loadPage(pool, {
      source: source.name,
      stream: 'transfers',
      organizationId: plan.organizationId,
      records: valid,
      rejects,
    });
    // records the loader quarantined (conflicting copies, refused by PostgreSQL) count as rejects
    state.records -= loaded.rejects - rejects.length;
    state.rejects += loaded.rejects - rejects.length;
    if (canStopEarly(plan, state)) {
      stoppedEarly = true;
      await pages.return(undefined as never);
      break;
    }
  }
  return finishTransfers(ctx, plan, state, stoppedEarly, started);
}

function canStopEarly(plan: TransfersPlan, state: ScanState): boolean {
  return (
    plan.mode === 'newest-first' &&
    plan.stopBefore !== null &&
    state.newestFirst &&
    state.oldestSeen < plan.stopBefore.getTime()
  );
}

async function finishTransfers(
  ctx: SyncContext,
  plan: TransfersPlan,
  state: ScanState,
  stoppedEarly: boolean,
  started: number,
): Promise<TransfersResult> {
  const distinct = state.ids.size + state.anonymous;
  const short = !stoppedEarly && state.maxTotal !== null && distinct < state.maxTotal;
  const detail = short
    ? `received ${distinct} distinct transfers of the ${state.maxTotal} the service reported`
    : null;
  const windowStart = stoppedEarly && plan.stopBefore ? plan.stopBefore : new Date(0);
  const result: TransfersResult = {
    source: ctx.source.name,
    stream: 'transfers',
    window: `${windowStart.toISOString()}/${new Date(started).toISOString()}`,
    kind: stoppedEarly ? 'newest-first' : 'scan',
    pages: state.pages,
    records: state.records,
    rejects: state.rejects,
    reportedTotal: state.maxTotal,
    distinct,
    reads: 1,
    outcome: short ? 'incomplete' : 'complete',
    ms: Date.now() - started,
    newestFirst: state.newestFirst,
    stoppedEarly,
    detail,
  };
  await recordWindow(ctx.pool, {
    source: ctx.source.name,
    stream: 'transfers',
    windowStart,
    windowEnd: new Date(started),
    kind: 'scan',
    fetchedAt: new Date(started),
    records: state.records,
    rejects: state.rejects,
    reportedTotal: state.maxTotal,
    pages: state.pages,
    outcome: result.outcome,
    detail,
  });
  ctx.log[short ? 'warn' : 'info']({ ...result }, short ? 'transfers scan incomplete' : 'transfers synced');
  ctx.onWindow?.(result);
  return result;
}
