/**
 * Counting one local day at the service, exactly, whatever it answers at the interface's open points.
 *
 * The difficulty: `dateFrom`/`dateTo` are whole seconds, their inclusivity is not documented, and
 * `createdAt` has milliseconds. So no single query is known to select exactly the day. Two methods:
 *
 * - `wrapper-total` (a handful of requests): ask for the padded window P (at least one second of padding
 *   each side, so every record of the day is strictly inside P whatever the bounds mean), `size=1`, once
 *   without and once per documented status; then subtract what P holds outside the day. That part is
 *   read, not guessed: E1 shares P's `dateFrom` and ends a second after the day starts, so it holds
 *   every record P holds before the day (the service applies the same bound to the same value); E2
 *   mirrors it at the end. Both are paged and filtered locally on `createdAt`.
 *   Used only when every answer is a wrapper with a `total` and the per-status totals add up to the
 *   unfiltered one (an ignored `status` filter, a lying total or an undocumented status break that sum).
 * - `paged`: read P fully without a status filter and keep, by id, the records whose `createdAt` falls in
 *   the day; tally per status, with exact amount sums. Costs the day's records / page size requests.
 * A caller that finds a difference with a wrapper total confirms it with `paged` before reporting it.
 */
import { decimalText, isLosslessNumber } from '../upstream/exact-json.js';
import type { ListPage, ListQuery, UpstreamClient } from '../upstream/client.js';
import { readPages } from '../upstream/paging.js';
import { PAYMENT_STATUSES } from '../upstream/schemas.js';
import { paddedQuery, type Window } from '../sync/windows.js';
import { isPlainDecimal, sumDecimals } from './decimal.js';
import type { Tally } from './reconcile-table.js';

export interface ServiceCount {
  method: 'wrapper-total' | 'paged';
  byStatus: Map<string, Tally>;
  /** Records the service listed that could not be placed (no id, or no readable createdAt). */
  unreadable: number;
}

export interface CountOptions {
  pageSize: number;
  padMs: number;
  maxPages: number;
  endpoint: string;
  source: string;
}

interface Seen {
  status: string;
  createdAt: number;
  amount: string | null;
}

type Fetch = (query: Omit<ListQuery, 'page' | 'size'>, page: number, size: number) => Promise<ListPage>;

function seenOf(item: unknown): Seen | null {
  const r = item as { status?: unknown; createdAt?: unknown; amount?: unknown } | null;
  const createdAt = typeof r?.createdAt === 'string' ? Date.parse(r.createdAt) : NaN;
  if (!r || Number.isNaN(createdAt)) return null;
  const raw = typeof r.amount === 'number' || isLosslessNumber(r.amount) ? decimalText(r.amount) : null;
  return {
    status: typeof r.status === 'string' ? r.status : '(none)',
    createdAt,
    amount: raw !== null && isPlainDecimal(raw) ? raw : null,
  };
}

function pagingOf(o: CountOptions) {
  return { size: o.pageSize, maxPages: o.maxPages, endpoint: o.endpoint, source: o.source };
}

/** Every distinct record of a query, by id (offset paging may repeat one); unreadable ones counted. */
async function readAll(fetch: Fetch, query: Omit<ListQuery, 'page' | 'size'>, o: CountOptions) {
  const byId = new Map<string, Seen>();
  let unreadable = 0;
  const pages = readPages((page) => fetch(query, page, o.pageSize), pagingOf(o));
  for await (const page of pages) {
    for (const item of page.items) {
      const id = (item as { id?: unknown } | null)?.id;
      const seen = seenOf(item);
      if (typeof id !== 'string' || seen === null) unreadable += 1;
      else byId.set(id, seen);
    }
  }
  return { records: [...byId.values()], unreadable };
}

function tally(records: readonly Seen[], keep: (s: Seen) => boolean): Map<string, Tally> {
  const groups = new Map<string, Seen[]>();
  for (const r of records) {
    if (!keep(r)) continue;
    const list = groups.get(r.status);
    if (list) list.push(r);
    else groups.set(r.status, [r]);
  }
  const out = new Map<string, Tally>();
  for (const [status, list] of groups) {
    const amounts = list.map((r) => r.amount);
    const exact = amounts.every((a): a is string => a !== null);
    out.set(status, { count: list.length, amount: exact ? sumDecimals(amounts) : null });
  }
  return out;
}

const inDay = (w: Window) => (s: Seen) => s.createdAt >= w.start.getTime() && s.createdAt < w.end.getTime();

export async function countPagedDay(fetch: Fetch, window: Window, o: CountOptions): Promise<ServiceCount> {
  const query = paddedQuery(window, Math.max(o.padMs, 1_000));
  const { records, unreadable } = await readAll(fetch, query, o);
  return { method: 'paged', byStatus: tally(records, inDay(window)), unreadable };
}

/** The wrapper-total method; null when the service's answers do not allow it (see the file comment). */
export async function countByTotals(
  fetch: Fetch,
  window: Window,
  o: CountOptions,
): Promise<ServiceCount | null> {
  const p = paddedQuery(window, Math.max(o.padMs, 1_000));
  const all = await fetch(p, 0, 1);
  if (all.shape !== 'wrapper' || all.total === null) return null;
  const totals = new Map<string, number>();
  for (const status of PAYMENT_STATUSES) {
    const page = await fetch({ ...p, status }, 0, 1);
    if (page.shape !== 'wrapper' || page.total === null) return null;
    totals.set(status, page.total);
  }
  if ([...totals.values()].reduce((a, b) => a + b, 0) !== all.total) return null;
  const startS = Math.floor(window.start.getTime() / 1000);
  const endS = Math.ceil(window.end.getTime() / 1000);
  const before = await readAll(fetch, { dateFrom: p.dateFrom, dateTo: startS + 1 }, o);
  const after = await readAll(fetch, { dateFrom: endS - 1, dateTo: p.dateTo }, o);
  if (before.unreadable + after.unreadable > 0) return null;
  const outside = [
    ...before.records.filter((r) => r.createdAt < window.start.getTime()),
    ...after.records.filter((r) => r.createdAt >= window.end.getTime()),
  ];
  const byStatus = new Map<string, Tally>();
  for (const [status, total] of totals) {
    const count = total - outside.filter((r) => r.status === status).length;
    if (count !== 0) byStatus.set(status, { count, amount: null });
  }
  return { method: 'wrapper-total', byStatus, unreadable: 0 };
}

export function paymentsFetch(client: UpstreamClient): Fetch {
  return (query, page, size) => client.listPayments({ ...query, page, size });
}

/** The whole transfer list (no filter exists): its wrapper total, or a count of distinct ids by paging. */
export async function countTransfers(
  client: UpstreamClient,
  o: CountOptions,
  trustTotal: boolean,
): Promise<{ method: 'wrapper-total' | 'paged'; count: number }> {
  if (trustTotal) {
    const first = await client.listTransfers({ page: 0, size: 1 });
    if (first.shape === 'wrapper' && first.total !== null)
      return { method: 'wrapper-total', count: first.total };
  }
  const ids = new Set<string>();
  let anonymous = 0;
  const pages = readPages((page) => client.listTransfers({ page, size: o.pageSize }), pagingOf(o));
  for await (const page of pages) {
    for (const item of page.items) {
      const id = (item as { id?: unknown } | null)?.id;
      if (typeof id === 'string') ids.add(id);
      else anonymous += 1;
    }
  }
  return { method: 'paged', count: ids.size + anonymous };
}
