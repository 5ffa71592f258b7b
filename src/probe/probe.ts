/**
 * `probeSource`: a handful of list requests that measure how the service answers the interface's open
 * points (docs/upstream.md, "Open points and how paysync answers them"). It is handed its client and its
 * clock, and reads nothing else. Every finding is derived from what came back, and a finding without
 * enough evidence is reported unknown rather than guessed (see evidence.ts).
 *
 * Requests, in order (about 9; see `requests` in the result):
 * 1. page 0 at each of `sizes` until one comes back short: served in full, or capped (page 1 tells);
 * 2. page 0 without `size`: the default page size;
 * 3. page 1 at a small size: is `page` honoured;
 * 4. two date-bounded reads around a record created on an exact second: inclusive or exclusive bounds;
 * 5. transfers page 0 (ordering) and a date-bounded transfers read (are undocumented filters honoured);
 * 6. payments filtered on one `status` (is the filter honoured: the lookback reads open records so).
 */
import type { ListPage, ListQuery } from '../upstream/client.js';
import {
  anyOutside,
  createdAtMs,
  idOf,
  idsOf,
  orderOf,
  sameIds,
  statusOf,
  wholeSecondRecord,
} from './evidence.js';
import type { Findings } from './findings.js';

export type ProbeStream = 'payments' | 'transfers';

export interface ProbeClient {
  listPayments(query: ListQuery): Promise<ListPage>;
  listTransfers(query: { page: number; size: number }): Promise<ListPage>;
  /**
   * One list request with exactly these query parameters and no others: how the probe asks what the
   * sync client never sends (no `size` at all; dates on the transfer list, which documents no filter).
   */
  rawList(stream: ProbeStream, params: Record<string, number>): Promise<ListPage>;
}

export interface ProbeOptions {
  /** Page sizes to ask for, ascending (default 1000 then 5000). */
  sizes?: readonly number[];
  now?: () => Date;
}

export const DEFAULT_PROBE_SIZES: readonly number[] = [1000, 5000];
/** Page 1 at this size must be the sample's records 3..5 when `page` is honoured. */
const PAGE_CHECK_SIZE = 3;
/** Records created within two seconds of one instant: far fewer than this in any real list. */
const BOUND_QUERY_SIZE = 100;

interface Recorder {
  client: ProbeClient;
  requests(): number;
  shape(): Findings['listShape'];
}

/** Counts the requests and notes every list shape they were answered in. */
function recording(inner: ProbeClient): Recorder {
  const shapes = new Set<ListPage['shape']>();
  let requests = 0;
  const note = async (call: () => Promise<ListPage>) => {
    requests += 1;
    const page = await call();
    shapes.add(page.shape);
    return page;
  };
  const client: ProbeClient = {
    listPayments: (q) => note(() => inner.listPayments(q)),
    listTransfers: (q) => note(() => inner.listTransfers(q)),
    rawList: (stream, params) => note(() => inner.rawList(stream, params)),
  };
  const shape = () => (shapes.size > 1 ? 'mixed' : ([...shapes][0] ?? 'array'));
  return { client, requests: () => requests, shape };
}

interface PageSizes {
  sample: ListPage;
  maxPageSize: number | null;
  pageSizeServed: number | null;
}

/** A short page 0 is either the whole list or a silent cap: fresh records on page 1 mean a cap. */
async function capBehind(c: ProbeClient, page0: ListPage, size: number): Promise<number | null> {
  if (page0.items.length === 0) return null;
  const seen = new Set(idsOf(page0.items));
  const page1 = await c.listPayments({ page: 1, size });
  return idsOf(page1.items).some((id) => !seen.has(id)) ? page0.items.length : null;
}

/** Open point "maximum page size" (Limits). The last page 0 read is the sample for what follows. */
async function probePageSizes(c: ProbeClient, sizes: readonly number[]): Promise<PageSizes> {
  let sample: ListPage | null = null;
  let served: number | null = null;
  let cap: number | null = null;
  for (const size of sizes) {
    sample = await c.listPayments({ page: 0, size });
    if (sample.items.length >= size) {
      served = size;
      continue;
    }
    cap = await capBehind(c, sample, size);
    break;
  }
  if (!sample) throw new RangeError('probe needs at least one page size');
  return { sample, maxPageSize: cap, pageSizeServed: served };
}

/** Open point "default values of page and size": a page without `size` is the default only when short. */
async function probeDefaultSize(c: ProbeClient, sample: ListPage): Promise<number | null> {
  const page = await c.rawList('payments', { page: 0 });
  const n = page.items.length;
  return n > 0 && sample.items.length > n ? n : null;
}

/** Whether `page` moves: page 1 of a small size must be the sample's next records, not its first. */
async function probePaging(c: ProbeClient, sample: ListPage): Promise<boolean | null> {
  const ids = idsOf(sample.items);
  if (ids.length < 2 * PAGE_CHECK_SIZE) return null;
  const page1 = idsOf((await c.listPayments({ page: 1, size: PAGE_CHECK_SIZE })).items);
  if (sameIds(page1, ids.slice(0, PAGE_CHECK_SIZE))) return false;
  if (sameIds(page1, ids.slice(PAGE_CHECK_SIZE, 2 * PAGE_CHECK_SIZE))) return true;
  return null; // the list moved between reads or its order is not stable: no verdict
}

type Bounds = Pick<Findings, 'dateFromInclusive' | 'dateToInclusive' | 'paymentsHonourDates'>;

/** Whether the record is in the page; unknown when it is missing from a full (maybe truncated) page. */
function contains(page: ListPage, id: string): boolean | null {
  if (idsOf(page.items).includes(id)) return true;
  return page.items.length >= BOUND_QUERY_SIZE ? null : false;
}

/**
 * Open point "whether dateFrom and dateTo are inclusive". A record created at exactly second s is asked
 * for with [s, s+1] (only dateFrom can exclude it) and [s-1, s] (only dateTo can). A record off the whole
 * second cannot tell inclusive from exclusive, so without one both stay unknown.
 */
async function probeBounds(c: ProbeClient, sample: ListPage): Promise<Bounds> {
  const unknown: Bounds = { dateFromInclusive: null, dateToInclusive: null, paymentsHonourDates: null };
  const record = wholeSecondRecord(sample.items);
  if (!record) return unknown;
  const s = record.second;
  const from = await c.listPayments({ page: 0, size: BOUND_QUERY_SIZE, dateFrom: s, dateTo: s + 1 });
  const to = await c.listPayments({ page: 0, size: BOUND_QUERY_SIZE, dateFrom: s - 1, dateTo: s });
  if (anyOutside(from.items, s - 1, s + 1) || anyOutside(to.items, s - 1, s + 1)) {
    return { ...unknown, paymentsHonourDates: false };
  }
  // Nothing outside the span came back; that proves filtering only if the sample had something outside.
  if (!anyOutside(sample.items, s - 1, s + 1)) return unknown;
  return {
    dateFromInclusive: contains(from, record.id),
    dateToInclusive: contains(to, record.id),
    paymentsHonourDates: true,
  };
}

/**
 * The transfer list documents no filters; if it honours dateFrom/dateTo anyway, a read of two seconds
 * around one of its records leaves the others out. Bounds are one second wide on each side so the
 * record is strictly inside whatever their inclusivity.
 */
async function transfersFilter(c: ProbeClient, sample: ListPage, size: number): Promise<boolean | null> {
  const middle = sample.items[Math.floor(sample.items.length / 2)];
  const id = idOf(middle);
  const ms = createdAtMs(middle);
  if (id === null || ms === null) return null;
  const s = Math.floor(ms / 1000);
  if (!anyOutside(sample.items, s - 1, s + 1)) return null; // nothing a filter would leave out
  const page = await c.rawList('transfers', { page: 0, size, dateFrom: s - 1, dateTo: s + 1 });
  if (anyOutside(page.items, s - 1, s + 1)) return false;
  return idsOf(page.items).includes(id) ? true : null;
}

async function probeTransfers(c: ProbeClient, size: number) {
  const sample = await c.listTransfers({ page: 0, size });
  return {
    transferOrder: orderOf(sample.items),
    transfersHonourDates: await transfersFilter(c, sample, size),
  };
}

/**
 * Whether the payment lists honour `status`: page 0 filtered on the sample's least frequent status (or on
 * PENDING when the sample holds one status only). A record of another status in the answer: not honoured.
 * Honoured only when the sample mixed statuses and the answer held that one status alone; an empty answer,
 * or one status everywhere, is no evidence (null).
 */
async function probeStatusFilter(c: ProbeClient, sample: ListPage): Promise<boolean | null> {
  const counts = new Map<string, number>();
  for (const status of sample.items.map(statusOf))
    if (status) counts.set(status, (counts.get(status) ?? 0) + 1);
  if (counts.size === 0) return null;
  const rarest = [...counts].sort((a, b) => a[1] - b[1])[0]?.[0] as string;
  const asked = counts.size > 1 ? rarest : rarest === 'PENDING' ? 'COMPLETE' : 'PENDING';
  const page = await c.listPayments({ page: 0, size: Math.max(sample.items.length, 10), status: asked });
  if (page.items.some((item) => statusOf(item) !== asked)) return false;
  return page.items.length > 0 && counts.size > 1 ? true : null;
}

export async function probeSource(client: ProbeClient, opts: ProbeOptions = {}): Promise<Findings> {
  const sizes = opts.sizes ?? DEFAULT_PROBE_SIZES;
  const now = opts.now ?? (() => new Date());
  const r = recording(client);
  const { sample, maxPageSize, pageSizeServed } = await probePageSizes(r.client, sizes);
  const defaultPageSize = await probeDefaultSize(r.client, sample);
  const honoursPage = await probePaging(r.client, sample);
  const bounds = await probeBounds(r.client, sample);
  const transfers = await probeTransfers(r.client, sizes[0] as number);
  const paymentsHonourStatus = await probeStatusFilter(r.client, sample);
  return {
    listShape: r.shape(),
    defaultPageSize,
    maxPageSize,
    pageSizeServed,
    ...bounds,
    paymentsHonourStatus,
    paymentOrder: orderOf(sample.items),
    ...transfers,
    honoursPage,
    probedAt: now().toISOString(),
    requests: r.requests(),
  };
}
