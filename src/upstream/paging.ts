/**
 * Reading every page of a list, stopping only on evidence. The interface leaves open the page defaults and
 * caps, the list shape and the ordering, so the rule must hold for every answer:
 *
 * - An empty page ends the list, whatever the shape.
 * - A bare array gives no evidence: a short page is not the end (the service may cap `size` silently at an
 *   unknown value), so paging goes on until an empty page.
 * - A wrapper ends the list early only when all of its own evidence agrees: the distinct records received
 *   reach its `total`, the page is short against the `size` it reports (a cap shows there), and, when it
 *   sends `totalPages`, this is the last of them. When in doubt (a lying `total`, a missing field, a full
 *   last page) one more page is read and the empty page ends it.
 * - A page k > 0 with exactly the ids of the previous page or of page 0 means the service ignores `page`
 *   (or the list shifts by a whole page per read): PaginationError instead of an endless loop.
 * - A hard ceiling of `maxPages` pages per call: PaginationError saying how to get under it.
 * - A read may start at a later page (`startPage`, a tail read of a list whose order is known): the pages
 *   before it are taken to hold `skipped` records, which count towards the wrapper's `total`; the first
 *   page read plays the part of page 0 for the repeat check, and the ceiling counts pages read.
 * Ordering is never relied on: ids are compared as sets.
 */
import { PaginationError } from '../errors.js';
import type { ListPage } from './list-page.js';

export interface PagingOptions {
  size: number;
  maxPages: number;
  endpoint: string;
  source?: string;
  /** The first page to read (default 0). */
  startPage?: number;
  /** Records on the pages before `startPage` (full pages of the size the service serves). */
  skipped?: number;
  /**
   * How many pages past the one being decided may be requested at once, once the service said how many
   * there are (lastPageOf); 0 or absent: one page at a time. Pages are still decided in order.
   */
  ahead?: () => number;
}

/** A page as read; `index` is the page number requested. */
export interface PageRead extends ListPage {
  index: number;
}

export interface PagingSummary {
  pages: number;
  /** Distinct records received (by id; a record without an id counts once per copy): compare with `maxTotal`. */
  items: number;
  endedBy: EndedBy;
  /** The largest `total` any wrapper page reported (it can grow while paging), null if none did. */
  maxTotal: number | null;
  shape: 'array' | 'wrapper' | 'mixed';
}

export type EndedBy = 'empty-page' | 'wrapper-last-page' | 'wrapper-total-reached' | 'past-total-pages';

/** What one page showed, with what came before it. */
export interface PageEvidence {
  index: number;
  count: number;
  shape: ListPage['shape'];
  total: number | null;
  totalPages: number | null;
  /** The page size the service reports (not the one requested). */
  size: number | null;
  /** Distinct records received so far, this page included. */
  received: number;
  /** The earlier page this one repeats exactly, or null. */
  repeats: number | null;
  /** Every id on this page was seen earlier in the read (a non-empty page, every item with an id). */
  allSeen?: boolean;
  /** Items listed before this page, copies included (a list may name a record twice, total counting both). */
  listedBefore?: number;
  /** Pages in a row, this one included, that brought at most a quarter of their items as new ids. */
  staleRun?: number;
  /** The first page this read requested (0 unless it started later). */
  firstIndex?: number;
  /** The `total` the first page read reported (null if none): see totalRunaway. */
  firstTotal?: number | null;
}

/**
 * Why paging could not end on evidence: a code of the window reasons table (src/sync/window-reasons.ts,
 * which checks that each of these is in it), kept on the PaginationError and in the window's sync-log row.
 */
export type PagingFailure = 'PAGE_IGNORED' | 'PAGE_CYCLE' | 'TRICKLE' | 'PAGE_CEILING' | 'TOTAL_RUNAWAY';

/** Stale pages in a row (each bringing at most a quarter of its items as new ids) that end a read. */
export const TRICKLE_PAGES = 3;

export type PageDecision =
  | { next: 'continue' }
  | { next: 'stop'; endedBy: EndedBy }
  | { next: 'fail'; reason: PagingFailure; detail: string };

function wrapperEnd(e: PageEvidence): EndedBy | null {
  if (e.shape !== 'wrapper' || e.total === null || e.size === null) return null;
  if (e.received < e.total || e.count >= e.size) return null;
  if (e.totalPages === null) return 'wrapper-total-reached';
  return e.index >= e.totalPages - 1 ? 'wrapper-last-page' : null;
}

/** The wrapper's last page by its own `totalPages`, shorter than its page size. */
function lastShortPage(e: PageEvidence): boolean {
  if (e.shape !== 'wrapper' || e.totalPages === null || e.size === null) return false;
  return e.index === e.totalPages - 1 && e.count < e.size;
}

/**
 * Every record of the wrapper's `total` arrived (distinct ids, or listings before this page when the list
 * names records more than once and `total` counts each listing).
 */
function totalArrived(e: PageEvidence): boolean {
  if (e.shape !== 'wrapper' || e.total === null) return false;
  return e.received >= e.total || (e.listedBefore ?? 0) >= e.total;
}

/**
 * The stopping rule. Pure. Besides an empty page and the wrapper's own evidence:
 * - a page whose ids were all seen earlier in the read ends it: complete when every record of `total`
 *   arrived (`past-total-pages`: the service serves pages past its end, round the list again or the last
 *   one again; followed, they lead to the ceiling), else a cycle (PAGE_CYCLE; PAGE_IGNORED when it repeats
 *   the previous or the first page exactly), except on the list's short last page (records created
 *   meanwhile earlier in the list pushed those across the boundary: the page past the end is read). A
 *   page past `totalPages` that brings new records is read:
 *   the `total` may be too low, and the empty page still ends the list;
 * - TRICKLE_PAGES pages in a row each bringing at most a quarter of its items as new ids end the read
 *   (TRICKLE): a list creeping forward a record or two per page, which a bare array cannot be told by
 *   its total; read on, it would cost a request per record.
 */
export function decideNextPage(
  e: PageEvidence,
  options: Pick<PagingOptions, 'maxPages' | 'size'>,
): PageDecision {
  if (e.count === 0) return { next: 'stop', endedBy: 'empty-page' };
  if ((e.repeats !== null || e.allSeen) && totalArrived(e))
    return { next: 'stop', endedBy: 'past-total-pages' };
  if (e.repeats !== null) {
    return {
      next: 'fail',
      reason: 'PAGE_IGNORED',
      detail:
        `the service ignores \`page\`: page ${e.index} returned exactly the ${e.count} records of page ${e.repeats}, ` +
        'so paging cannot advance; stopped instead of looping',
    };
  }
  // the list's last page, short, holding only records seen on the page before: records created meanwhile
  // earlier in the list pushed them across the page boundary (drift), not a cycle; the page past the end
  // settles it, and the read's shortfall is judged by its verdict
  if (e.allSeen && lastShortPage(e)) return { next: 'continue' };
  if (e.allSeen)
    return {
      next: 'fail',
      reason: 'PAGE_CYCLE',
      detail:
        `paging cycles: page ${e.index} held only records this read had already seen (${e.received} distinct so far` +
        `${e.total !== null ? ` of the ${e.total} reported` : ''}); stopped instead of going round again`,
    };
  const endedBy = wrapperEnd(e);
  if (endedBy) return { next: 'stop', endedBy };
  const runaway = totalRunaway(e, options.size);
  if (runaway) return { next: 'fail', reason: 'TOTAL_RUNAWAY', detail: runaway };
  if ((e.staleRun ?? 0) >= TRICKLE_PAGES)
    return {
      next: 'fail',
      reason: 'TRICKLE',
      detail:
        `paging trickles: ${e.staleRun} pages in a row (up to page ${e.index}) each brought at most a quarter of ` +
        `their records as new ones (${e.received} distinct so far); stopped instead of a request per record`,
    };
  if (e.index - (e.firstIndex ?? 0) + 1 >= options.maxPages) {
    return {
      next: 'fail',
      reason: 'PAGE_CEILING',
      detail:
        `read the page ceiling of ${options.maxPages} pages (size ${options.size}) without reaching the end of the list; ` +
        `narrow the window to fewer than ${options.maxPages * options.size} records or raise maxPages`,
    };
  }
  return { next: 'continue' };
}

/**
 * A `total` that keeps growing past the first page's figure: records arriving while paging move it a
 * little, a broken or hostile service grows it with every page (followed, it would lead every tick to the
 * 10,000-page ceiling). Past half as many pages again as the first total needed, plus two, the read ends as
 * incomplete (it is read again later) instead of following the total.
 */
export function totalRunaway(e: PageEvidence, size: number): string | null {
  const first = e.firstTotal ?? null;
  if (first === null || e.total === null || e.total <= first) return null;
  const allowed = Math.ceil((first * 1.5) / size) + 2;
  if (e.index + 1 < allowed) return null;
  return (
    `the service's total grew from ${first} (first page) to ${e.total} while paging; stopped after ${e.index + 1} pages ` +
    'instead of following it: the read is incomplete and will be read again'
  );
}

function keyOf(item: unknown): string {
  const id = (item as { id?: unknown } | null)?.id;
  if (typeof id === 'string' || typeof id === 'number') return `id:${String(id)}`;
  return `json:${JSON.stringify(item) ?? 'undefined'}`;
}

function signatureOf(items: readonly unknown[]): string {
  return items.map(keyOf).sort().join('\u0000');
}

/** Accumulates what the pages showed; turns each page into evidence for decideNextPage. */
export class PageTracker {
  private readonly seen = new Set<string>();
  private anonymous = 0;
  private firstSignature: string | null = null;
  private previousItems: readonly unknown[] | null = null;
  private readonly shapes = new Set<ListPage['shape']>();
  private maxTotal: number | null = null;
  private firstTotal: number | null = null;
  private pages = 0;
  private listed = 0;
  private staleRun = 0;

  /** `firstIndex`: the first page read; `skipped`: records taken to be on the pages before it. */
  constructor(
    private readonly firstIndex = 0,
    private readonly skipped = 0,
  ) {}

  observe(index: number, page: ListPage): PageEvidence {
    this.pages += 1;
    this.shapes.add(page.shape);
    if (page.total !== null) this.maxTotal = Math.max(this.maxTotal ?? 0, page.total);
    if (index === this.firstIndex) this.firstTotal = page.total;
    // A page holding an id this read had not seen cannot repeat an earlier page: its signature (every
    // key, sorted, joined: 2% of a backfill's worker CPU) is only worked out when every id was seen.
    let fresh = false;
    let anonymous = false;
    let added = 0;
    for (const item of page.items) {
      const id = (item as { id?: unknown } | null)?.id;
      // the id's own string, not a new key per record: a window's set holds up to 100k of them
      const key = typeof id === 'string' ? id : typeof id === 'number' ? String(id) : null;
      if (key === null) {
        anonymous = true;
        this.anonymous += 1;
      } else if (!this.seen.has(key)) {
        fresh = true;
        added += 1;
        this.seen.add(key);
      }
    }
    const later = index !== this.firstIndex && page.items.length > 0;
    const allSeen = later && !fresh && !anonymous;
    this.staleRun = later && !anonymous && added * 4 <= page.items.length ? this.staleRun + 1 : 0;
    const listedBefore = this.listed;
    this.listed += page.items.length;
    const previous = this.previousItems;
    this.previousItems = page.items;
    let repeats: number | null = null;
    if (index === this.firstIndex) this.firstSignature = signatureOf(page.items);
    else if (page.items.length > 0 && (!fresh || anonymous)) {
      const signature = signatureOf(page.items);
      if (previous !== null && signature === signatureOf(previous)) repeats = index - 1;
      else if (signature === this.firstSignature) repeats = this.firstIndex;
    }
    const { shape, total, totalPages, size } = page;
    const received = this.skipped + this.seen.size + this.anonymous;
    const { firstIndex, firstTotal } = this;
    const count = page.items.length;
    const staleRun = this.staleRun;
    return {
      index,
      count,
      shape,
      total,
      totalPages,
      size,
      received,
      repeats,
      firstIndex,
      firstTotal,
      allSeen,
      listedBefore,
      staleRun,
    };
  }

  summary(endedBy: EndedBy): PagingSummary {
    const shape = this.shapes.size > 1 ? 'mixed' : this.shapes.has('wrapper') ? 'wrapper' : 'array';
    return {
      pages: this.pages,
      items: this.seen.size + this.anonymous,
      endedBy,
      maxTotal: this.maxTotal,
      shape,
    };
  }
}

/**
 * The last page a wrapper says the list has, from `totalPages`, or from `total` and the page size it
 * reports (or the size asked, when the page came back full at it); null for a bare array or without those.
 * Only ever a reason to ask for pages sooner: whether paging ends is still decideNextPage's, page by page.
 */
export function lastPageOf(page: ListPage, requestedSize: number): number | null {
  if (page.shape !== 'wrapper') return null;
  if (page.totalPages !== null) return page.totalPages - 1;
  if (page.total === null) return null;
  const size = page.size ?? (page.items.length === requestedSize ? requestedSize : null);
  return size !== null && size > 0 ? Math.ceil(page.total / size) - 1 : null;
}

/**
 * Reads pages 0, 1, 2… (or from `startPage` on) through `fetchPage` and yields each one (the final empty page too: it may carry the
 * wrapper's `total`). Returns the summary. Throws PaginationError when paging cannot end on evidence; the
 * caller must then not treat the list as complete.
 *
 * With `ahead`, once a page says how many pages the list has, the next ones up to that many are requested
 * at once (never past the list's last page, the page ceiling, or `ahead()` beyond the page being decided);
 * their answers may arrive in any order, and each is observed, decided and yielded in page order as
 * before, so the evidence, the verdict and the rows are those of a read one page at a time. A page
 * requested ahead that the decisions never reach (the list ended sooner) is dropped unread.
 */
export async function* readPages(
  fetchPage: (page: number) => Promise<ListPage>,
  options: PagingOptions,
): AsyncGenerator<PageRead, PagingSummary> {
  const first = options.startPage ?? 0;
  const tracker = new PageTracker(first, options.skipped ?? 0);
  const ctx = { endpoint: options.endpoint, ...(options.source ? { source: options.source } : {}) };
  const requested = new Map<number, Promise<ListPage>>();
  const take = (index: number): Promise<ListPage> => {
    const early = requested.get(index);
    requested.delete(index);
    return early ?? fetchPage(index);
  };
  let last = -1;
  for (let index = first; ; index++) {
    const page = await take(index);
    const decision = decideNextPage(tracker.observe(index, page), options);
    if (decision.next === 'fail') throw new PaginationError(ctx, decision.detail, decision.reason);
    yield { ...page, index };
    if (decision.next === 'stop') return tracker.summary(decision.endedBy);
    // asked for only once the caller took this page (it may stop here: a window it will split instead)
    if (options.ahead) {
      last = Math.min(Math.max(last, lastPageOf(page, options.size) ?? -1), first + options.maxPages - 1);
      const upTo = Math.min(last, index + options.ahead());
      for (let next = index + 1; next <= upTo; next++) {
        if (requested.has(next)) continue;
        const early = fetchPage(next);
        early.catch(() => undefined); // a failure surfaces when its page's turn comes; unread, it is dropped
        requested.set(next, early);
      }
    }
  }
}
