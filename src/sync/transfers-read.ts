/**
 * One read of the transfer list, from page 0 or from a later page (a tail read), to the end or until a
 * newest-first read may stop. Each page is validated record by record, loaded, and the position of each
 * id in the list remembered. Returns the evidence for the verdicts in read-verdict.ts; decides nothing.
 */
import { ENDPOINTS } from '../upstream/client.js';
import { readPages, type PageRead, type PagingSummary } from '../upstream/paging.js';
import { validateTransfers } from '../upstream/schemas.js';
import { clockOf, type SyncContext } from './context.js';
import { isImpossibleTimeReason, timeCheck } from './record-times.js';
import type { NoteCode } from './window-reasons.js';
import { DistinctIds, canStopNewestFirst, emptyOrder, observeOrder, type OrderSeen } from './read-verdict.js';
import type { PositionEntry, TransferMemory } from './transfer-state.js';
import { countListed } from './listing.js';

export interface TransferReadSpec {
  startPage: number;
  /** Records taken to be on the pages before `startPage`. */
  skipped: number;
  /** A newest-first read stops once past this; null reads to the end. */
  stopBefore: Date | null;
  organizationId: string | null;
  /** When the read began: stamps the positions it remembers. */
  at: Date;
}

export interface TransferReadOutcome {
  ids: DistinctIds;
  /** Every listing received, copies of a transfer listed more than once included. */
  entries: number;
  /** Ids listed more than once in this read, with how many listings beyond the first. */
  copies: Map<string, number>;
  /** readPages' own summary; null when the read stopped early (newest-first). */
  summary: PagingSummary | null;
  records: number;
  rejects: number;
  pages: number;
  maxTotal: number | null;
  order: OrderSeen;
  /** Records on the first page read, and how many of their ids were already held before it. */
  firstPage: { count: number; known: number };
  /** Records per page the service served, when a full page was followed by another non-empty one. */
  servedSize: number | null;
  /** Anomalies the read saw: an impossible `total`, records quarantined for impossible times. */
  anomalies: Set<NoteCode>;
}

function idOf(item: unknown): string | null {
  const id = (item as { id?: unknown } | null)?.id;
  if (typeof id === 'string') return id;
  return typeof id === 'number' ? String(id) : null;
}

function positionsOf(items: readonly unknown[], from: number): PositionEntry[] {
  const entries: PositionEntry[] = [];
  items.forEach((item, k) => {
    const id = idOf(item);
    if (id !== null) entries.push({ id, position: from + k });
  });
  return entries;
}

export async function readTransferList(
  ctx: SyncContext,
  memory: TransferMemory,
  spec: TransferReadSpec,
): Promise<TransferReadOutcome> {
  const { client, source, options } = ctx;
  const warehouse = ctx.warehouse;
  const pages = readPages((page) => client.listTransfers({ page, size: options.pageSize }), {
    size: options.pageSize,
    maxPages: options.maxPagesPerRead,
    endpoint: ENDPOINTS.transfers,
    source: source.name,
    startPage: spec.startPage,
    skipped: spec.skipped,
  });
  const out: TransferReadOutcome = {
    ids: new DistinctIds(),
    entries: 0,
    copies: new Map(),
    summary: null,
    records: 0,
    rejects: 0,
    pages: 0,
    maxTotal: null,
    order: emptyOrder(),
    firstPage: { count: 0, known: 0 },
    servedSize: null,
    anomalies: new Set(),
  };
  let position = spec.skipped;
  const times = timeCheck(clockOf(ctx), options.futureToleranceMs);
  for (;;) {
    const next: IteratorResult<PageRead, PagingSummary> = await pages.next();
    if (next.done) {
      out.summary = next.value;
      if (next.value.endedBy === 'past-total-pages') out.anomalies.add('PAST_TOTAL_PAGES');
      break;
    }
    const page = next.value;
    const entries = positionsOf(page.items, position);
    if (out.pages === 0) {
      out.firstPage = {
        count: page.items.length,
        known: await memory.known(
          source.name,
          entries.map((e) => e.id),
        ),
      };
    } else if (out.pages === 1 && page.items.length > 0) {
      out.servedSize = out.firstPage.count;
    }
    const { valid, rejects } = validateTransfers(page.items, times);
    if (rejects.some((r) => isImpossibleTimeReason(r.reason))) out.anomalies.add('IMPOSSIBLE_TIMESTAMP');
    if (page.totalAnomaly !== undefined) out.anomalies.add('IMPOSSIBLE_TOTAL');
    out.order = observeOrder(
      out.order,
      valid.map((t) => t.createdAt),
    );
    const loaded = await warehouse.loadPage(
      {
        source: source.name,
        stream: 'transfers',
        organizationId: spec.organizationId,
        records: valid,
        rejects,
      },
      ctx.log,
    );
    await memory.remember(source.name, entries, spec.at);
    tally(
      out,
      page,
      valid.map((t) => t.id),
      rejects.map((r) => r.id),
    );
    // records the loader quarantined (conflicting copies, refused by PostgreSQL) count as rejects
    out.records -= loaded.rejects - rejects.length;
    out.rejects += loaded.rejects - rejects.length;
    position += page.items.length;
    if (canStopNewestFirst(spec.stopBefore, out.order)) {
      await pages.return(undefined as never);
      break;
    }
  }
  return out;
}

function tally(out: TransferReadOutcome, page: PageRead, ids: string[], rejectIds: (string | null)[]): void {
  out.pages += 1;
  if (page.total !== null) out.maxTotal = Math.max(out.maxTotal ?? 0, page.total);
  for (const id of ids) countListed(out, id);
  for (const id of rejectIds) countListed(out, id);
  out.records += ids.length;
  out.rejects += rejectIds.length;
}
