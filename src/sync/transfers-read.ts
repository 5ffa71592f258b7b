/**
 * One read of the transfer list, from page 0 or from a later page (a tail read), to the end or until a
 * newest-first read may stop. Each page is validated record by record, loaded, and the position of each
 * id in the list remembered. Returns the evidence for the verdicts in read-verdict.ts; decides nothing.
 */
import { ENDPOINTS } from '../upstream/client.js';
import { readPages, type PageRead, type PagingSummary } from '../upstream/paging.js';
import { validateTransfers, type RejectedRecord, type Transfer } from '../upstream/schemas.js';
import { clockOf, type SyncContext } from './context.js';
import { isImpossibleTimeReason, timeCheck } from './record-times.js';
import type { NoteCode } from './window-reasons.js';
import { DistinctIds, canStopNewestFirst, emptyOrder, observeOrder, type OrderSeen } from './read-verdict.js';
import type { PositionEntry, TransferMemory } from './transfer-state.js';
import { countListed } from './listing.js';
import { HeldCopies } from './copies.js';

export interface TransferReadSpec {
  startPage: number;
  /** Records taken to be on the pages before `startPage`. */
  skipped: number;
  /** A newest-first read stops once past this; null reads to the end. */
  stopBefore: Date | null;
  organizationId: string | null;
  /** When the read began: stamps the positions it remembers. */
  at: Date;
  /**
   * Ids whose every copy is held back (copies.ts): those an earlier read listed more than once, and those
   * the rejects hold as contradicted. Judged only by a read of the whole list (from page 0 to the end).
   */
  watch?: ReadonlySet<string>;
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
  /**
   * Anomalies the read saw: an impossible `total`, records quarantined for impossible times, copies of
   * one transfer contradicting each other.
   */
  anomalies: Set<NoteCode>;
  /**
   * Ids whose copies this read held back unjudged: later copies of an id it listed before (its first copy
   * is written), and watched ids of a read that did not cover the whole list (nothing of them written).
   * A read that watches them judges them.
   */
  unjudged: Set<string>;
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
    unjudged: new Set(),
  };
  // copies of one id across pages, judged once a read of the whole list has them all (copies.ts)
  const held = new HeldCopies<Transfer>(spec.watch);
  /** One page's records and rejects, committed together; the loader's own quarantine counts as rejects. */
  const load = async (records: Transfer[], rejects: RejectedRecord[]): Promise<void> => {
    const loaded = await warehouse.loadPage(
      { source: source.name, stream: 'transfers', organizationId: spec.organizationId, records, rejects },
      ctx.log,
    );
    // records the loader quarantined (conflicting copies, refused by PostgreSQL) count as rejects
    out.records -= loaded.rejects - rejects.length;
    out.rejects += loaded.rejects - rejects.length;
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
    const repeated = new Set(valid.filter((t) => out.ids.ids.has(t.id)).map((t) => t.id)); // on earlier pages
    const records = valid.filter((t) => !held.hold(t, repeated.has(t.id)));
    await load(records, rejects);
    await memory.remember(source.name, entries, spec.at);
    tally(
      out,
      page,
      valid.map((t) => t.id),
      rejects.map((r) => r.id),
    );
    position += page.items.length;
    if (canStopNewestFirst(spec.stopBefore, out.order)) {
      await pages.return(undefined as never);
      break;
    }
  }
  await judgeHeld(out, held, spec.startPage === 0 && out.summary !== null, load);
  return out;
}

/**
 * The held copies, judged (copies.ts) when the read covered the whole list: a watched id's copies give
 * their version to write and, when they contradict each other, every version as a reject. A read of part
 * of the list (stopped early, or a tail) may have missed a copy: it writes none of a watched id's, and
 * leaves them unjudged for a read of the whole list.
 */
async function judgeHeld(
  out: TransferReadOutcome,
  held: HeldCopies<Transfer>,
  whole: boolean,
  load: (records: Transfer[], rejects: RejectedRecord[]) => Promise<void>,
): Promise<void> {
  for (const id of held.unjudged) out.unjudged.add(id);
  if (!whole) {
    for (const id of held.watchedSeen()) out.unjudged.add(id);
    return;
  }
  const verdict = held.judge();
  if (verdict.records.length + verdict.rejects.length > 0) await load(verdict.records, verdict.rejects);
  out.records -= verdict.unwritten;
  out.rejects += verdict.unwritten;
  if (verdict.contradicted) out.anomalies.add('CONTRADICTING_COPIES');
}

function tally(out: TransferReadOutcome, page: PageRead, ids: string[], rejectIds: (string | null)[]): void {
  out.pages += 1;
  if (page.total !== null) out.maxTotal = Math.max(out.maxTotal ?? 0, page.total);
  for (const id of ids) countListed(out, id);
  for (const id of rejectIds) countListed(out, id);
  out.records += ids.length;
  out.rejects += rejectIds.length;
}
