/**
 * One read of one payments window: page through the list with the window's padded `dateFrom`/`dateTo`,
 * validate each page record by record, and load the pages as they arrive, in batches of at least PAGE_SIZE
 * records (the next page is fetched while the previous batch is being written). Returns what was seen, the
 * evidence for `decideWindow` (read-verdict.ts); decides nothing. Every page it read is committed before it returns, also
 * when reading fails part-way; a failure leaves only whole pages.
 */
import { warehouseOf } from './adapters.js';
import { ENDPOINTS } from '../upstream/client.js';
import { readPages, type PageRead, type PagingSummary } from '../upstream/paging.js';
import { validatePayments, type Payment, type RejectedRecord } from '../upstream/schemas.js';
import { paddedQuery, type Window } from './windows.js';
import type { SyncContext } from './context.js';
import { DistinctIds } from './read-verdict.js';

export interface ReadOutcome {
  /** Distinct records received, valid and rejected alike (the service counts both). */
  ids: DistinctIds;
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
}

function emptyOutcome(): ReadOutcome {
  return {
    ids: new DistinctIds(),
    summary: null,
    records: 0,
    rejects: 0,
    pages: 0,
    nonEmptyPages: 0,
    maxTotal: null,
    farOutside: 0,
    abandonedForSplit: false,
  };
}

const DAY_MS = 86_400_000;

function tally(
  out: ReadOutcome,
  page: PageRead,
  rejects: RejectedRecord[],
  validIds: string[],
  createdAts: string[],
  query: { dateFrom: number; dateTo: number },
): void {
  out.pages += 1;
  if (page.items.length > 0) out.nonEmptyPages += 1;
  if (page.total !== null) out.maxTotal = Math.max(out.maxTotal ?? 0, page.total);
  for (const id of validIds) out.ids.add(id);
  for (const reject of rejects) out.ids.add(reject.id);
  out.records += validIds.length;
  out.rejects += rejects.length;
  out.farOutside += farOutside(createdAts, query);
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

export interface ReadOptions {
  /** Given the first page's reported total, whether to abandon the read (the window will be split). */
  tooLarge?: (reportedTotal: number | null, farOutside: number) => boolean;
}

export async function readPaymentsWindow(
  ctx: SyncContext,
  window: Window,
  opts: ReadOptions = {},
): Promise<ReadOutcome> {
  const { client, source, options } = ctx;
  const warehouse = warehouseOf(ctx);
  const query = paddedQuery(window, options.padMs);
  const pages = readPages((page) => client.listPayments({ page, size: options.pageSize, ...query }), {
    size: options.pageSize,
    maxPages: options.maxPagesPerRead,
    endpoint: source.scope === 'organisation' ? ENDPOINTS.paymentsByOrganisation : ENDPOINTS.paymentsByApiKey,
    source: source.name,
  });
  const out = emptyOutcome();
  // Pages are loaded in batches of at least PAGE_SIZE records: a service that caps its pages (at 100, say)
  // would otherwise cost one statement per small page (bench: capped backfill).
  let batch: { records: Payment[]; rejects: RejectedRecord[] } = { records: [], rejects: [] };
  const batched = () => batch.records.length + batch.rejects.length;
  const load = () => {
    const { records, rejects } = batch;
    batch = { records: [], rejects: [] };
    return warehouse
      .loadPage({
        source: source.name,
        stream: 'payments',
        organizationId: null,
        records,
        rejects,
      })
      .then((loaded) => {
        // records the loader quarantined (conflicting copies, refused by PostgreSQL) count as rejects
        out.records -= loaded.rejects - rejects.length;
        out.rejects += loaded.rejects - rejects.length;
        return loaded;
      });
  };
  let loading: Promise<unknown> = Promise.resolve();
  let readFailed = true;
  try {
    for (;;) {
      const next: IteratorResult<PageRead, PagingSummary> = await pages.next();
      if (next.done) {
        out.summary = next.value;
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
      const { valid, rejects } = validatePayments(page.items);
      tally(
        out,
        page,
        rejects,
        valid.map((p) => p.id),
        valid.map((p) => p.createdAt),
        query,
      );
      for (const record of valid) batch.records.push(record); // no spread: a page's length is the service's choice
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
  if (batched() > 0) await load();
  return out;
}
