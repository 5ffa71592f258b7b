/**
 * Pure readings of listed records for the probe: ids, creation times, ordering, and which records fall
 * in a span. Records are untrusted `unknown`s; one without a readable `id` or `createdAt` is simply not
 * evidence.
 */
import type { ListOrder } from './findings.js';

/** Ordering needs at least this many distinct creation times: two records are always in "some" order. */
export const MIN_ORDER_EVIDENCE = 3;

export function idOf(item: unknown): string | null {
  const id = (item as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? String(id) : null;
}

export function idsOf(items: readonly unknown[]): string[] {
  return items.map(idOf).filter((id): id is string => id !== null);
}

/** createdAt in epoch ms, or null when missing or unparsable. */
export function createdAtMs(item: unknown): number | null {
  const text = (item as { createdAt?: unknown } | null)?.createdAt;
  if (typeof text !== 'string') return null;
  const ms = Date.parse(text);
  return Number.isFinite(ms) ? ms : null;
}

function times(items: readonly unknown[]): number[] {
  return items.map(createdAtMs).filter((t): t is number => t !== null);
}

/** The order of a list by createdAt (ties allowed either way); 'unknown' on thin evidence. */
export function orderOf(items: readonly unknown[]): ListOrder {
  const ts = times(items);
  if (new Set(ts).size < MIN_ORDER_EVIDENCE) return 'unknown';
  let rises = false;
  let falls = false;
  for (let i = 1; i < ts.length; i++) {
    const a = ts[i - 1] as number;
    const b = ts[i] as number;
    if (b > a) rises = true;
    if (b < a) falls = true;
  }
  if (rises && falls) return 'unordered';
  return rises ? 'asc' : 'desc';
}

/** A record created exactly on a whole second (the only kind that tells inclusive from exclusive). */
export function wholeSecondRecord(items: readonly unknown[]): { id: string; second: number } | null {
  for (const item of items) {
    const id = idOf(item);
    const ms = createdAtMs(item);
    if (id !== null && ms !== null && ms % 1000 === 0 && ms > 1000) return { id, second: ms / 1000 };
  }
  return null;
}

/** Whether any record was created outside [fromSecond, toSecond] (bounds inclusive, compared in ms). */
export function anyOutside(items: readonly unknown[], fromSecond: number, toSecond: number): boolean {
  return times(items).some((t) => t < fromSecond * 1000 || t > toSecond * 1000);
}

/** Ids of `page` in `items`, as a set comparison: exactly equal sets. */
export function sameIds(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((id) => set.has(id));
}

/** An item's `status` when it is a string, else null. */
export function statusOf(item: unknown): string | null {
  const status = (item as { status?: unknown } | null)?.status;
  return typeof status === 'string' ? status : null;
}
