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
 *   the day (listPaymentsDay); reconcile then compares them record by record (record-diff.ts), with exact
 *   amounts. Costs the day's records / page size requests. Transfers have no date filter: their day is
 *   the whole list read and kept by `createdAt` (listTransfersDay).
 * A caller that finds a difference with a wrapper total confirms it with `paged` before reporting it.
 */
import { decimalText, isLosslessNumber, toExactJson } from '../upstream/exact-json.js';
import type { ListPage, ListQuery, UpstreamClient } from '../upstream/client.js';
import { readPages } from '../upstream/paging.js';
import { PAYMENT_STATUSES } from '../upstream/schemas.js';
import { paddedQuery, type Window } from '../sync/windows.js';
import { isPlainDecimal } from './decimal.js';
import { MAX_KEY_BYTES } from '../upstream/storable.js';
import type { ServiceRecord } from './record-diff.js';
import type { Tally } from './reconcile-table.js';

export interface ServiceCount {
  method: 'wrapper-total';
  byStatus: Map<string, Tally>;
}

export interface CountOptions {
  pageSize: number;
  padMs: number;
  maxPages: number;
  endpoint: string;
  source: string;
}

export interface Seen extends ServiceRecord {
  /** Epoch milliseconds, or null when the record's createdAt is not a readable instant. */
  createdAt: number | null;
}

type Fetch = (query: Omit<ListQuery, 'page' | 'size'>, page: number, size: number) => Promise<ListPage>;

/** What reconcile needs of one listed item, whatever it holds (a malformed record is listed too). */
export function seenOf(item: unknown): Seen {
  const r = (item ?? {}) as { id?: unknown; status?: unknown; createdAt?: unknown; amount?: unknown };
  const createdAt = typeof r.createdAt === 'string' ? Date.parse(r.createdAt) : NaN;
  const raw = typeof r.amount === 'number' || isLosslessNumber(r.amount) ? decimalText(r.amount) : null;
  return {
    // an id too long to be a key is not one: its reject is kept without it (upstream/schemas idOf), so it
    // can only be matched the way records without an id are
    id: typeof r.id === 'string' && r.id.length > 0 && Buffer.byteLength(r.id) <= MAX_KEY_BYTES ? r.id : null,
    status: typeof r.status === 'string' && r.status !== '' ? r.status : '(none)',
    createdAt: Number.isNaN(createdAt) ? null : createdAt,
    amount: raw !== null && isPlainDecimal(raw) ? raw : null,
  };
}

function pagingOf(o: CountOptions) {
  return { size: o.pageSize, maxPages: o.maxPages, endpoint: o.endpoint, source: o.source };
}

/** A listed item's `updatedAt` in epoch milliseconds, or NaN when it has none readable. */
function updatedAtOf(item: unknown): number {
  const at = (item as { updatedAt?: unknown } | null)?.updatedAt;
  return typeof at === 'string' ? Date.parse(at) : NaN;
}

/** A record a list named more than once, counted as sync counts it: one record plus its copies. */
export interface ListedTwice {
  /** Its id; null for a record without a usable id, listed again with the very same text. */
  id: string | null;
  createdAt: number | null;
  /** The status of each listing, the first one first: `statuses.length - 1` copies. */
  statuses: string[];
}

/**
 * Every distinct record a list answers (offset paging may repeat one): by id, and a record without a
 * usable id by its exact JSON text (the same record served twice is the same text). Of copies of one id
 * that differ, the one sync writes stands for it (sync/copies.ts): the newer `updatedAt`, else the last
 * listed. `twice`: the records listed more than once, with each listing's status.
 */
async function readAll(pages: AsyncIterable<ListPage>): Promise<{ records: Seen[]; twice: ListedTwice[] }> {
  const byKey = new Map<string, { seen: Seen; updatedAt: number; statuses: string[] }>();
  for await (const page of pages) {
    for (const item of page.items) {
      const seen = seenOf(item);
      const key = seen.id !== null ? `id:${seen.id}` : `raw:${toExactJson(item)}`;
      const updatedAt = updatedAtOf(item);
      const before = byKey.get(key);
      if (!before) byKey.set(key, { seen, updatedAt, statuses: [seen.status] });
      else {
        before.statuses.push(seen.status);
        // an older copy does not stand for the id (NaN compares false: the later listing does)
        if (!(before.updatedAt > updatedAt)) Object.assign(before, { seen, updatedAt });
      }
    }
  }
  const values = [...byKey.values()];
  return {
    records: values.map((v) => v.seen),
    twice: values
      .filter((v) => v.statuses.length > 1)
      .map((v) => ({ id: v.seen.id, createdAt: v.seen.createdAt, statuses: v.statuses })),
  };
}

async function readQuery(fetch: Fetch, query: Omit<ListQuery, 'page' | 'size'>, o: CountOptions) {
  return readAll(readPages((page) => fetch(query, page, o.pageSize), pagingOf(o)));
}

const inDay = (w: Window) => (s: { createdAt: number | null }) =>
  s.createdAt !== null && s.createdAt >= w.start.getTime() && s.createdAt < w.end.getTime();

/**
 * The day's payments as the service lists them: the padded window read whole, kept by `createdAt` in the
 * day. A record whose createdAt is unreadable cannot be placed more precisely than "listed for this day's
 * padded window", so it is kept (it can only be a quarantined record, never a valid one).
 */
export async function listPaymentsDay(
  fetch: Fetch,
  window: Window,
  o: CountOptions,
): Promise<{ records: ServiceRecord[]; twice: ListedTwice[] }> {
  const read = await readQuery(fetch, paddedQuery(window, Math.max(o.padMs, 1_000)), o);
  const kept = (r: { createdAt: number | null }) => r.createdAt === null || inDay(window)(r);
  return { records: read.records.filter(kept).map(toServiceRecord), twice: read.twice.filter(kept) };
}

/** The whole transfer list (the interface has no filter for it); a day keeps its own with `transfersOfDay`. */
export async function listTransfers(client: UpstreamClient, o: CountOptions): Promise<Seen[]> {
  const read = await readAll(
    readPages((page) => client.listTransfers({ page, size: o.pageSize }), pagingOf(o)),
  );
  return read.records;
}

/** The day's transfers, by `createdAt` (a transfer without a readable one belongs to no day). */
export function transfersOfDay(all: readonly Seen[], window: Window): ServiceRecord[] {
  return all.filter(inDay(window)).map(toServiceRecord);
}

const toServiceRecord = ({ id, status, amount }: Seen): ServiceRecord => ({ id, status, amount });

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
  const before = await readQuery(fetch, { dateFrom: p.dateFrom, dateTo: startS + 1 }, o);
  const after = await readQuery(fetch, { dateFrom: endS - 1, dateTo: p.dateTo }, o);
  if ([...before.records, ...after.records].some((r) => r.id === null || r.createdAt === null)) return null;
  const early = (r: { createdAt: number | null }) => r.createdAt! < window.start.getTime();
  const late = (r: { createdAt: number | null }) => r.createdAt! >= window.end.getTime();
  // every listing outside the day, copies included: the totals count each listing
  const outside = [
    ...before.records.filter(early).map((r) => r.status),
    ...after.records.filter(late).map((r) => r.status),
    ...before.twice.filter(early).flatMap((t) => t.statuses.slice(1)),
    ...after.twice.filter(late).flatMap((t) => t.statuses.slice(1)),
  ];
  const byStatus = new Map<string, Tally>();
  for (const [status, total] of totals) {
    const count = total - outside.filter((s) => s === status).length;
    if (count !== 0) byStatus.set(status, { count, amount: null });
  }
  return { method: 'wrapper-total', byStatus };
}

export function paymentsFetch(client: UpstreamClient): Fetch {
  return (query, page, size) => client.listPayments({ ...query, page, size });
}
