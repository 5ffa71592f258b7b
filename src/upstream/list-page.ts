/**
 * One page type for both list shapes. Which shape the service answers with is an open point of the
 * interface ("a bare array … and/or the Page wrapper"), so every list body goes through `toListPage`.
 *
 * Tolerance (decided here): an object with a `data` array is a wrapper even when `total`, `page`, `size`
 * or `totalPages` are missing or malformed; those become `null`. A wrapper with less evidence is still a
 * list, and the pager (paging.ts) then falls back to its safest rule: read on until an empty page.
 * Anything else (a scalar, an object without a `data` array) is not a list: UpstreamProtocolError.
 */
import { duplicateKeysOf } from './json-reader.js';

export interface ListPage {
  items: unknown[];
  shape: 'array' | 'wrapper';
  /** The wrapper's evidence, as the service reported it; null for a bare array or a missing field. */
  total: number | null;
  totalPages: number | null;
  page: number | null;
  size: number | null;
  /** What was asked for (the service may cap `size` silently and may ignore `page`). */
  requested: { page: number; size: number };
  /** SHA-256 of the body, when the read asked for it (`ListQuery.fingerprint`). */
  digest?: string;
  /**
   * Set when the wrapper sent a `total` no list can have (negative, fractional, beyond 2^31-1, not a
   * number): `total` is then null (the page is judged as if it sent none) and this says what came.
   */
  totalAnomaly?: string;
}

/** The largest `total` a list can have: no list holds 2^31 records, and the sync log stores it. */
export const MAX_LIST_TOTAL = 2 ** 31 - 1;

export type ListPageResult = { ok: true; page: ListPage } | { ok: false; detail: string };

function count(value: unknown): number | null {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

/**
 * `count` gives each field exactly what PageWrapperSchema would (a safe, non-negative integer, else null),
 * so a well-formed wrapper needs no schema pass (which copied the 1000-item `data` array of every page).
 */
function wrapperPage(body: Record<string, unknown>, requested: ListPage['requested']): ListPage {
  const sent = body.total;
  const counted = count(sent);
  const total = counted !== null && counted <= MAX_LIST_TOTAL ? counted : null;
  const impossible = total === null && sent !== undefined && sent !== null;
  return {
    ...(impossible
      ? { totalAnomaly: `total ${String(JSON.stringify(sent)).slice(0, 40)} is no list's` }
      : {}),
    items: body.data as unknown[],
    shape: 'wrapper',
    total,
    totalPages: count(body.totalPages),
    page: count(body.page),
    size: count(body.size),
    requested,
  };
}

/** Normalises a parsed list body. Pure. */
export function toListPage(body: unknown, requested: ListPage['requested']): ListPageResult {
  if (Array.isArray(body)) {
    return {
      ok: true,
      page: { items: body, shape: 'array', total: null, totalPages: null, page: null, size: null, requested },
    };
  }
  if (body !== null && typeof body === 'object' && Array.isArray((body as { data?: unknown }).data)) {
    const repeated = duplicateKeysOf(body);
    if (repeated.length > 0) {
      // `data` or `total` twice: which one the service meant cannot be known (records may hide in the other)
      return {
        ok: false,
        detail: `the page wrapper names ${JSON.stringify(repeated[0]?.slice(0, 40))} twice`,
      };
    }
    return { ok: true, page: wrapperPage(body as Record<string, unknown>, requested) };
  }
  const what =
    body === null ? 'null' : typeof body === 'object' ? 'an object without a data array' : typeof body;
  return {
    ok: false,
    detail: `a list body must be an array or a page wrapper with a data array (got ${what})`,
  };
}
