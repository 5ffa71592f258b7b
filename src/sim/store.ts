/**
 * Per-organisation record arrays, kept sorted by (createdAt, id), and the list query over them.
 * Visibility (createdAt <= now) and the date window are two binary searches; only the status, type and
 * key filters and the non-ascending orders need a scan, whose result is cached until the data, the
 * window or (for a status filter) the clock changes — so paging through a window is linear overall.
 */
import {
  type PaymentRecord,
  type Timeline,
  type TransferRecord,
  compareTimeline,
  paymentStatusAt,
} from './records.js';
import type { Ordering, SimStream } from './types.js';

export type StreamName = SimStream;

export interface ListQuery {
  stream: StreamName;
  organizationId: string;
  /** By-key scope: only records created with this key id. */
  apiKeyId?: string;
  status?: string;
  type?: string;
  /** Window on createdAt in ms, as a half-open or closed range per the flags. */
  fromMs?: number;
  fromInclusive: boolean;
  toMs?: number;
  toInclusive: boolean;
  order: Ordering;
}

/** The matching records are `items[start..end)`, in the requested order. */
export interface Selection<T> {
  items: readonly T[];
  start: number;
  end: number;
}

/** First index whose createdAt is >= t (or > t when `after`). */
export function searchTime(items: readonly Timeline[], t: number, after: boolean): number {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = (items[mid] as Timeline).createdAt;
    if (c < t || (after && c === t)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const CACHE_SIZE = 16;

export class Store {
  readonly payments = new Map<string, PaymentRecord[]>();
  readonly transfers = new Map<string, TransferRecord[]>();
  /** Bumped on every insert or removal: invalidates cached selections (and listings, see page.ts). */
  private changes = 0;
  private readonly cache = new Map<string, Timeline[]>();

  insert(stream: StreamName, organizationId: string, record: Timeline): void {
    const items = this.list(stream, organizationId);
    let at = searchTime(items, record.createdAt, true);
    while (at > 0 && compareTimeline(items[at - 1] as Timeline, record) > 0) at--;
    items.splice(at, 0, record);
    this.changes++;
  }

  /** Removes a record (the service deleted it); false when there was none with that id. */
  remove(stream: StreamName, organizationId: string, id: string): boolean {
    const items = this.list(stream, organizationId);
    const at = items.findIndex((r) => r.id === id);
    if (at < 0) return false;
    items.splice(at, 1);
    this.changes++;
    return true;
  }

  get version(): number {
    return this.changes;
  }

  /** The record with this id in any stream and organisation (a linear search: for rare operations). */
  find(id: string): Timeline | undefined {
    for (const lists of [this.payments, this.transfers])
      for (const items of lists.values()) {
        const found = items.find((r) => r.id === id);
        if (found) return found;
      }
    return undefined;
  }

  list(stream: StreamName, organizationId: string): Timeline[] {
    const items = (stream === 'payments' ? this.payments : this.transfers).get(organizationId);
    if (!items) throw new Error(`unknown organisation ${organizationId}`);
    return items;
  }

  /** Records visible at `now` matching the query. */
  select(q: ListQuery, now: number): Selection<Timeline> {
    const items = this.list(q.stream, q.organizationId);
    const visible = searchTime(items, now, true);
    const start = q.fromMs === undefined ? 0 : searchTime(items, q.fromMs, !q.fromInclusive);
    const to = q.toMs === undefined ? visible : searchTime(items, q.toMs, q.toInclusive);
    const end = Math.max(start, Math.min(visible, to));
    const filtered = q.apiKeyId !== undefined || q.status !== undefined || q.type !== undefined;
    if (!filtered && q.order === 'asc') return { items, start, end };
    const key = [q.stream, q.organizationId, q.apiKeyId, q.status, q.type, start, end, q.order, this.changes];
    if (q.status !== undefined) key.push(now);
    const cacheKey = key.join('|');
    let result = this.cache.get(cacheKey);
    if (!result) {
      result = ordered(filterRange(items, start, end, q, now), q.order);
      this.remember(cacheKey, result);
    }
    return { items: result, start: 0, end: result.length };
  }

  private remember(key: string, value: Timeline[]): void {
    if (this.cache.size >= CACHE_SIZE) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(key, value);
  }
}

function filterRange(items: readonly Timeline[], start: number, end: number, q: ListQuery, now: number) {
  const out: Timeline[] = [];
  for (let i = start; i < end; i++) {
    const r = items[i] as PaymentRecord;
    if (q.apiKeyId !== undefined && r.apiKeyId !== q.apiKeyId) continue;
    if (q.type !== undefined && r.type !== q.type) continue;
    if (q.status !== undefined && paymentStatusAt(r, now) !== q.status) continue;
    out.push(r);
  }
  return out;
}

/** `unordered` is a shuffle by each record's seeded key: the same order on every request. */
function ordered(items: Timeline[], order: Ordering): Timeline[] {
  if (order === 'desc') return items.reverse();
  if (order === 'unordered')
    return items.sort((a, b) => a.shuffleKey - b.shuffleKey || compareTimeline(a, b));
  return items;
}
