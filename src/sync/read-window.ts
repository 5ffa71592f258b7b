/**
 * One read of one payments window: page through the list with the window's padded `dateFrom`/`dateTo`,
 * validate each page record by record, and load the pages as they arrive, in batches of at least PAGE_SIZE
 * records (the next page is fetched while the previous batch is being written). Returns what was seen, the
 * evidence for `decideWindow` (read-verdict.ts); decides nothing. Every page it read is committed before it returns, also
 * when reading fails part-way; a failure leaves only whole pages.
 */
import { ENDPOINTS } from '../upstream/client.js';
import type { ListPage } from '../upstream/client.js';
import { readPages, type PageRead, type PagingSummary } from '../upstream/paging.js';
import { validatePayments, type Payment, type RejectedRecord } from '../upstream/schemas.js';
import { paddedQuery, windowLabel, type Window } from './windows.js';
import { clockOf, type SyncContext } from './context.js';
import { isImpossibleTimeReason, timeCheck } from './record-times.js';
import type { NoteCode } from './window-reasons.js';
import { DistinctIds } from './read-verdict.js';
import { countListed } from './listing.js';
import { HeldCopies } from './copies.js';

export interface ReadOutcome {
  /** Distinct records received, valid and rejected alike (the service counts both). */
  ids: DistinctIds;
  /** Every listing received, copies of a record listed more than once included. */
  entries: number;
  /** Ids listed more than once in this read, with how many listings beyond the first. */
  copies: Map<string, number>;
  /** readPages' own summary; null when the read was abandoned for a split. */
  summary: PagingSummary | null;
  records: number;
  rejects: number;
  pages: number;
  nonEmptyPages: number;
  maxTotal: number | null;
  /** Records whose createdAt is far outside the padded request: the service ignored the date filter. */
  farOutside: number;
  /** Set when the read stopped after its first page because the window is too large (see `tooLarge`). */
  abandonedForSplit: boolean;
  /** Pages whose bytes an earlier read of the window had already read and committed (`known`). */
  reusedPages: number;
  /** Anomalies the read saw: an impossible `total`, records quarantined for impossible times. */
  anomalies: Set<NoteCode>;
  /** With a `status` filter: valid records listed in another status (the service ignores the filter). */
  offStatus: number;
  /**
   * Ids whose copies this read held back unjudged: later copies of an id it listed before (its first copy
   * was written), and, in a `partial` read, watched ids (none of their copies written). Watch them next.
   */
  unjudged: Set<string>;
  /** The createdAt of every copy held back unjudged: where the windows that will judge them are. */
  unjudgedCreated: string[];
}

function emptyOutcome(): ReadOutcome {
  return {
    ids: new DistinctIds(),
    entries: 0,
    copies: new Map(),
    summary: null,
    records: 0,
    rejects: 0,
    pages: 0,
    nonEmptyPages: 0,
    maxTotal: null,
    farOutside: 0,
    abandonedForSplit: false,
    reusedPages: 0,
    anomalies: new Set(),
    offStatus: 0,
    unjudged: new Set(),
    unjudgedCreated: [],
  };
}

const DAY_MS = 86_400_000;

/** Adds one page to the read's outcome: `ids` are its valid records' ids, then its rejects' ids. */
function tally(
  out: ReadOutcome,
  page: PageRead,
  ids: readonly (string | null)[],
  rejects: number,
  far: number,
): void {
  out.pages += 1;
  if (page.items.length > 0) out.nonEmptyPages += 1;
  if (page.total !== null) out.maxTotal = Math.max(out.maxTotal ?? 0, page.total);
  for (const id of ids) countListed(out, id);
  out.records += ids.length - rejects;
  out.rejects += rejects;
  out.farOutside += far;
}

/** A `total` no list can have: judged as no total (list-page.ts), noted once per read, and logged. */
function noteImpossibleTotal(ctx: SyncContext, out: ReadOutcome, page: PageRead, window: Window): void {
  if (out.anomalies.has('IMPOSSIBLE_TOTAL')) return;
  out.anomalies.add('IMPOSSIBLE_TOTAL');
  ctx.log.warn(
    { source: ctx.source.name, window: windowLabel(window), page: page.index, detail: page.totalAnomaly },
    'the service sent a total no list can have: the window is judged as if it sent none',
  );
}

/** Records created more than a day outside the request: evidence that the date filter is ignored. */
function farOutside(createdAts: readonly unknown[], query: { dateFrom: number; dateTo: number }): number {
  let n = 0;
  for (const createdAt of createdAts) {
    const t = typeof createdAt === 'string' ? Date.parse(createdAt) : NaN;
    if (t < query.dateFrom * 1000 - DAY_MS || t > query.dateTo * 1000 + DAY_MS) n += 1;
  }
  return n;
}

/** What a read kept of a page, to recognise it by its bytes in a later read of the same window. */
interface KnownPage {
  /** The page as listed, without its records. */
  listed: Omit<ListPage, 'items'>;
  /** Its items' ids in order: all the pager looks at (pages whose every item has a text id only). */
  itemIds: string[];
  /** What tally counted: the valid records' ids, then the rejects' ids. */
  tallied: (string | null)[];
  rejects: number;
  farOutside: number;
}

/**
 * The pages of a window's first read, by the SHA-256 of their bodies. A bare-array window is always read a
 * second time to confirm it (read-verdict.ts); a page of that read whose bytes equal a page of the first
 * read holds the same records, which the first read already committed: it is counted as read again
 * without being parsed, validated or written (writing it would only bump `synced_at`; its rejects keep
 * the times seen of the first read). A page that changed in any byte is read and written as usual.
 */
export class KnownPages {
  private readonly byDigest = new Map<string, KnownPage>();

  remember(page: PageRead, tallied: (string | null)[], rejects: number, farOutside: number): void {
    if (page.digest === undefined) return;
    const itemIds: string[] = [];
    for (const item of page.items) {
      const id = (item as { id?: unknown } | null)?.id;
      if (typeof id !== 'string') return; // the pager would see a stand-in differently: not kept
      itemIds.push(id);
    }
    const { items: _items, index: _index, ...listed } = page;
    this.byDigest.set(page.digest, { listed, itemIds, tallied, rejects, farOutside });
  }

  /** The page with these bytes as the pager saw it (its items reduced to their ids), or null. */
  page(digest: string): ListPage | null {
    const known = this.byDigest.get(digest);
    return known ? { ...known.listed, items: known.itemIds.map((id) => ({ id })) } : null;
  }

  get(digest: string | undefined): KnownPage | undefined {
    return digest === undefined ? undefined : this.byDigest.get(digest);
  }
}

export interface ReadOptions {
  /** Only records in this status (the documented `status` filter; lookback.ts reads open records so). */
  status?: string;
  /** Given the first page's reported total, whether to abandon the read (the window will be split). */
  tooLarge?: (reportedTotal: number | null, farOutside: number) => boolean;
  /** Keep the pages of this read (the window's first), for the reads that confirm it. */
  remember?: KnownPages;
  /** Pages of an earlier read of the window: one whose bytes come back unchanged is not read again. */
  known?: KnownPages;
  /**
   * Ids whose every copy is held back and judged at the end of the read (copies.ts): those an earlier read
   * listed more than once, and those the rejects hold as contradicted.
   */
  watch?: ReadonlySet<string>;
  /**
   * The read may miss copies of a record of its range (a `status` list, a narrow read around one
   * record): it judges no watched id, writes none of its copies and leaves it unjudged for a read of
   * its whole window (as a transfers read of part of the list does).
   */
  partial?: boolean;
  /**
   * Awaited once, before the page after a non-empty bare-array first page is asked for: the read goes on
   * only when the window's turn comes (SyncContext.bareWindowTurn).
   */
  beforeMoreBarePages?: () => Promise<void>;
}

export async function readPaymentsWindow(
  ctx: SyncContext,
  window: Window,
  opts: ReadOptions = {},
): Promise<ReadOutcome> {
  const { client, source, options } = ctx;
  const warehouse = ctx.warehouse;
  const query = paddedQuery(window, options.padMs);
  // The first read fingerprints page 0 and, when the service answers with bare arrays (which are always
  // read again), every page; a confirmation read fingerprints every page to look it up.
  let bare = false;
  const { remember, known } = opts;
  const recognise = (page: number) =>
    known
      ? { known: (digest: string) => known.page(digest) }
      : { fingerprint: remember !== undefined && (page === 0 || bare) };
  const listPage = (page: number) =>
    client.listPayments({
      page,
      size: options.pageSize,
      ...query,
      ...(opts.status !== undefined ? { status: opts.status } : {}),
      ...recognise(page),
    });
  const pages = readPages(listPage, {
    size: options.pageSize,
    maxPages: options.maxPagesPerRead,
    endpoint: source.scope === 'organisation' ? ENDPOINTS.paymentsByOrganisation : ENDPOINTS.paymentsByApiKey,
    source: source.name,
    ...(ctx.pagesAhead ? { ahead: ctx.pagesAhead } : {}),
  });
  const out = emptyOutcome();
  const times = timeCheck(clockOf(ctx), options.futureToleranceMs);
  // Pages are loaded in batches of at least PAGE_SIZE records: a service that caps its pages (at 100, say)
  // would otherwise cost one statement per small page (bench: capped backfill).
  let batch: { records: Payment[]; rejects: RejectedRecord[] } = { records: [], rejects: [] };
  const batched = () => batch.records.length + batch.rejects.length;
  const load = () => {
    const { records, rejects } = batch;
    batch = { records: [], rejects: [] };
    return warehouse
      .loadPage(
        {
          source: source.name,
          stream: 'payments',
          organizationId: null,
          records,
          rejects,
        },
        ctx.log,
      )
      .then((loaded) => {
        // records the loader quarantined (conflicting copies, refused by PostgreSQL) count as rejects
        out.records -= loaded.rejects - rejects.length;
        out.rejects += loaded.rejects - rejects.length;
        return loaded;
      });
  };
  // copies of one id across pages, judged once the read has them all (copies.ts)
  const held = new HeldCopies<Payment>(opts.watch);
  let loading: Promise<unknown> = Promise.resolve();
  let readFailed = true;
  let waitTurn = opts.beforeMoreBarePages;
  try {
    for (;;) {
      if (bare && waitTurn && out.nonEmptyPages > 0) {
        const wait = waitTurn;
        waitTurn = undefined;
        await wait();
      }
      const next: IteratorResult<PageRead, PagingSummary> = await pages.next();
      if (next.done) {
        out.summary = next.value;
        if (next.value.endedBy === 'past-total-pages') out.anomalies.add('PAST_TOTAL_PAGES');
        break;
      }
      const page = next.value;
      const createdAtsOf = () =>
        page.items.map((item) => (item as { createdAt?: unknown } | null)?.createdAt);
      if (out.pages === 0 && opts.tooLarge?.(page.total, farOutside(createdAtsOf(), query))) {
        out.abandonedForSplit = true;
        out.maxTotal = page.total;
        await pages.return(undefined as never);
        break;
      }
      if (page.index === 0 && page.shape === 'array') bare = true;
      const again = known?.get(page.digest);
      if (again) {
        out.reusedPages += 1;
        tally(out, page, again.tallied, again.rejects, again.farOutside);
        continue;
      }
      if (page.totalAnomaly !== undefined) noteImpossibleTotal(ctx, out, page, window);
      const { valid, rejects } = validatePayments(page.items, times);
      if (rejects.some((r) => isImpossibleTimeReason(r.reason))) out.anomalies.add('IMPOSSIBLE_TIMESTAMP');
      if (opts.status !== undefined)
        for (const record of valid) if (record.status !== opts.status) out.offStatus += 1;
      const repeated = new Set(valid.filter((p) => out.ids.ids.has(p.id)).map((p) => p.id)); // on earlier pages
      const tallied: (string | null)[] = valid.map((p) => p.id);
      for (const reject of rejects) tallied.push(reject.id);
      const far = farOutside(
        valid.map((p) => p.createdAt),
        query,
      );
      tally(out, page, tallied, rejects.length, far);
      remember?.remember(page, tallied, rejects.length, far);
      for (const record of valid) {
        // no spread: a page's length is the service's choice
        if (!held.hold(record, repeated.has(record.id))) batch.records.push(record);
      }
      for (const reject of rejects) batch.rejects.push(reject);
      if (batched() < options.pageSize) continue;
      await loading; // at most one batch being written while the next page is fetched
      loading = load();
      loading.catch(() => undefined); // surfaced by the await below; avoids an unhandled rejection meanwhile
    }
    readFailed = false;
  } finally {
    await loading.catch(() => undefined);
    // what was read before a failure is kept (whole pages); the window is read again anyway
    if (readFailed && batched() > 0) await load().catch(() => undefined);
  }
  await loading;
  judgeHeld(out, held, batch, opts.partial === true);
  if (batched() > 0) await load();
  return out;
}

/**
 * The held copies, judged (copies.ts): a watched id's copies (all of them) give their version to write
 * and, when they contradict each other, every version as a reject; an id first seen repeated in this read
 * keeps the copy already written and waits for the next read, which holds all of its copies. A partial
 * read judges nothing: a watched id's copies are neither written nor rejects, and wait likewise.
 */
function judgeHeld(
  out: ReadOutcome,
  held: HeldCopies<Payment>,
  batch: { records: Payment[]; rejects: RejectedRecord[] },
  partial: boolean,
): void {
  for (const id of held.unjudged) out.unjudged.add(id);
  if (partial) {
    const watched = held.watchedSeen();
    for (const id of watched) out.unjudged.add(id);
    out.records -= held.copiesOf(watched).length;
  }
  for (const copy of held.copiesOf(out.unjudged)) out.unjudgedCreated.push(copy.createdAt);
  if (partial) return;
  const verdict = held.judge();
  for (const record of verdict.records) batch.records.push(record);
  for (const reject of verdict.rejects) batch.rejects.push(reject);
  out.records -= verdict.unwritten;
  out.rejects += verdict.unwritten;
  if (verdict.contradicted) out.anomalies.add('CONTRADICTING_COPIES');
}
