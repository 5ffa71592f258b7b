/**
 * The pager's stopping rule, without a server: every answer the interface's open points allow (bare
 * arrays, wrappers with and without evidence, silent caps, an ignored `page`, lying totals).
 */
import { describe, expect, it } from '@jest/globals';
import { PaginationError } from '../../src/errors.js';
import type { ListPage } from '../../src/upstream/list-page.js';
import {
  TRICKLE_PAGES,
  decideNextPage,
  readPages,
  type PageEvidence,
  type PagingSummary,
} from '../../src/upstream/paging.js';

const records = (n: number, offset = 0) => Array.from({ length: n }, (_, i) => ({ id: `r${offset + i}` }));

/** A service over `n` records that serves `cap` per page however many are asked for. */
function service(
  n: number,
  opts: { cap?: number; shape?: 'array' | 'wrapper'; ignorePage?: boolean; totalOffset?: number },
) {
  const all = records(n);
  const requests: number[] = [];
  const fetchPage = async (page: number): Promise<ListPage> => {
    requests.push(page);
    const size = Math.min(100, opts.cap ?? 100);
    const p = opts.ignorePage ? 0 : page;
    const items = all.slice(p * size, p * size + size);
    const requested = { page, size: 100 };
    if (opts.shape !== 'wrapper') {
      return { items, shape: 'array', total: null, totalPages: null, page: null, size: null, requested };
    }
    const total = n + (opts.totalOffset ?? 0);
    return { items, shape: 'wrapper', total, totalPages: Math.ceil(total / size), page: p, size, requested };
  };
  return { fetchPage, requests };
}

async function readAll(
  fetchPage: (page: number) => Promise<ListPage>,
  maxPages = 50,
  tail: { startPage?: number; skipped?: number } = {},
) {
  const ids: string[] = [];
  const gen = readPages(fetchPage, { size: 100, maxPages, endpoint: '/api/test', ...tail });
  for (;;) {
    const next = await gen.next();
    if (next.done) return { ids, summary: next.value as PagingSummary };
    for (const item of next.value.items) ids.push((item as { id: string }).id);
  }
}

const evidence = (e: Partial<PageEvidence>): PageEvidence => ({
  index: 0,
  count: 10,
  shape: 'array',
  total: null,
  totalPages: null,
  size: null,
  received: 10,
  repeats: null,
  ...e,
});
const limits = { maxPages: 100, size: 10 };

describe('decideNextPage', () => {
  it('stops on an empty page, whatever the shape', () => {
    expect(decideNextPage(evidence({ count: 0 }), limits)).toEqual({ next: 'stop', endedBy: 'empty-page' });
    expect(decideNextPage(evidence({ count: 0, shape: 'wrapper', total: 50 }), limits).next).toBe('stop');
  });

  it('does not take a short bare-array page as the end (the cap is unknown)', () => {
    expect(decideNextPage(evidence({ count: 3 }), limits)).toEqual({ next: 'continue' });
  });

  it('stops on a wrapper only when total, reported size and totalPages all agree', () => {
    const last = evidence({
      index: 2,
      count: 5,
      shape: 'wrapper',
      total: 25,
      totalPages: 3,
      size: 10,
      received: 25,
    });
    expect(decideNextPage(last, limits)).toEqual({ next: 'stop', endedBy: 'wrapper-last-page' });
    // total reached but not the last page, received short of total, or a full last page: read on.
    expect(decideNextPage({ ...last, index: 1 }, limits).next).toBe('continue');
    expect(decideNextPage({ ...last, received: 24 }, limits).next).toBe('continue');
    expect(decideNextPage({ ...last, count: 10, received: 30, total: 30 }, limits).next).toBe('continue');
  });

  it('uses total and a short page when the wrapper has no totalPages', () => {
    const e = evidence({ count: 5, shape: 'wrapper', total: 5, size: 10, received: 5 });
    expect(decideNextPage(e, limits)).toEqual({ next: 'stop', endedBy: 'wrapper-total-reached' });
    expect(decideNextPage({ ...e, size: null }, limits).next).toBe('continue');
    expect(decideNextPage({ ...e, total: null }, limits).next).toBe('continue');
  });

  it('fails on a repeated page instead of looping', () => {
    const decision = decideNextPage(evidence({ index: 1, repeats: 0 }), limits);
    expect(decision.next).toBe('fail');
    expect(decision.next === 'fail' && decision.detail).toMatch(/ignores `page`/);
  });

  it('ends a read on a page of records already seen: complete once total arrived, else a cycle', () => {
    const past = evidence({ index: 9, count: 10, shape: 'wrapper', total: 90, totalPages: 9, size: 10 });
    // every record of total arrived, and the service goes round again: the end, on evidence
    expect(decideNextPage({ ...past, received: 90, allSeen: true }, limits)).toEqual({
      next: 'stop',
      endedBy: 'past-total-pages',
    });
    // the last page again (a repeat) after every record arrived: the end too
    expect(decideNextPage({ ...past, received: 90, repeats: 8 }, limits).next).toBe('stop');
    // copies counted by total: every listing of total arrived before this page
    expect(decideNextPage({ ...past, received: 80, listedBefore: 90, allSeen: true }, limits).next).toBe(
      'stop',
    );
    // short of total, or no total at all: a cycle, not the end
    const cycle = decideNextPage({ ...past, received: 40, allSeen: true }, limits);
    expect(cycle).toMatchObject({ next: 'fail', reason: 'PAGE_CYCLE' });
    expect(decideNextPage(evidence({ index: 4, count: 10, allSeen: true }), limits)).toMatchObject({
      next: 'fail',
      reason: 'PAGE_CYCLE',
    });
    // a page past totalPages that brings new records is read: the total may be too low
    expect(decideNextPage({ ...past, received: 95 }, limits).next).toBe('continue');
  });

  it('reads past the short last page whose records were all seen (drift pushed them across), only there', () => {
    // 51 reported, pages of 25: records created meanwhile before the last page pushed its one record there
    const last = evidence({ index: 2, count: 1, shape: 'wrapper', total: 51, totalPages: 3, size: 25 });
    expect(decideNextPage({ ...last, received: 50, allSeen: true }, limits)).toEqual({ next: 'continue' });
    // a full page of seen records, or a short one past the last: a cycle still
    expect(decideNextPage({ ...last, count: 25, received: 50, allSeen: true }, limits)).toMatchObject({
      reason: 'PAGE_CYCLE',
    });
    expect(decideNextPage({ ...last, index: 3, received: 50, allSeen: true }, limits)).toMatchObject({
      reason: 'PAGE_CYCLE',
    });
  });

  it('ends a read that trickles: pages in a row bringing at most a quarter new records', () => {
    const e = evidence({ index: 5, count: 10 });
    expect(decideNextPage({ ...e, staleRun: TRICKLE_PAGES - 1 }, limits)).toEqual({ next: 'continue' });
    expect(decideNextPage({ ...e, staleRun: TRICKLE_PAGES }, limits)).toMatchObject({
      next: 'fail',
      reason: 'TRICKLE',
    });
  });

  it('fails at the page ceiling, saying how to get under it', () => {
    const decision = decideNextPage(evidence({ index: 99 }), limits);
    expect(decision.next === 'fail' && decision.detail).toMatch(/ceiling of 100 pages.*raise maxPages/);
  });
});

describe('readPages', () => {
  it('reads a bare array capped silently below the requested size to the empty page', async () => {
    const { fetchPage, requests } = service(230, { cap: 50 });
    const { ids, summary } = await readAll(fetchPage);
    expect(new Set(ids).size).toBe(230);
    expect(requests).toEqual([0, 1, 2, 3, 4, 5]);
    expect(summary).toEqual({ pages: 6, items: 230, endedBy: 'empty-page', maxTotal: null, shape: 'array' });
  });

  it('ends a capped wrapper list on its own evidence, without an extra request', async () => {
    const { fetchPage, requests } = service(230, { cap: 50, shape: 'wrapper' });
    const { ids, summary } = await readAll(fetchPage);
    expect(ids).toHaveLength(230);
    expect(requests).toEqual([0, 1, 2, 3, 4]);
    expect(summary).toMatchObject({ endedBy: 'wrapper-last-page', maxTotal: 230, shape: 'wrapper' });
  });

  it('reads past a total that is too low, and ends on an empty page', async () => {
    const { fetchPage } = service(200, { cap: 50, shape: 'wrapper', totalOffset: -50 });
    const { ids, summary } = await readAll(fetchPage);
    expect(ids).toHaveLength(200);
    expect(summary).toMatchObject({ endedBy: 'empty-page', items: 200, maxTotal: 150 });
  });

  it('reports a total that is too high instead of stopping early', async () => {
    const { fetchPage } = service(120, { shape: 'wrapper', totalOffset: 7 });
    const { summary } = await readAll(fetchPage);
    expect(summary).toMatchObject({ endedBy: 'empty-page', items: 120, maxTotal: 127 });
  });

  it('fails loudly when the service ignores `page`', async () => {
    for (const shape of ['array', 'wrapper'] as const) {
      const { fetchPage, requests } = service(500, { shape, ignorePage: true });
      await expect(readAll(fetchPage)).rejects.toThrow(PaginationError);
      expect(requests).toEqual([0, 1]);
    }
  });

  it('stops at the hard ceiling with a PaginationError', async () => {
    const { fetchPage, requests } = service(10_000, {});
    await expect(readAll(fetchPage, 7)).rejects.toThrow(/page ceiling of 7 pages/);
    expect(requests).toHaveLength(7);
  });

  it('counts a record seen twice (the list shifted while paging) once', async () => {
    const pages = [records(3), records(3, 2), []];
    const fetchPage = async (page: number): Promise<ListPage> => ({
      items: pages[page] ?? [],
      shape: 'array',
      total: null,
      totalPages: null,
      page: null,
      size: null,
      requested: { page, size: 3 },
    });
    const { ids, summary } = await readAll(fetchPage);
    expect(ids).toHaveLength(6);
    expect(summary.items).toBe(5);
  });

  it('reports a mixed shape when the service alternates', async () => {
    const { fetchPage: wrapped } = service(150, { shape: 'wrapper' });
    const { fetchPage: bare } = service(150, {});
    const { ids, summary } = await readAll((page) => (page % 2 ? wrapped(page) : bare(page)));
    expect(ids).toHaveLength(150);
    expect(summary.shape).toBe('mixed');
  });

  describe('a tail read, from a later page', () => {
    it('reads from startPage to the end; the skipped records count towards the wrapper total', async () => {
      const { fetchPage, requests } = service(930, { cap: 50, shape: 'wrapper' });
      const { ids, summary } = await readAll(fetchPage, 50, { startPage: 15, skipped: 750 });
      expect(requests).toEqual([15, 16, 17, 18]); // ends on the wrapper's own evidence, no extra request
      expect(ids).toEqual(records(180, 750).map((r) => r.id));
      expect(summary).toMatchObject({ pages: 4, items: 180, endedBy: 'wrapper-last-page', maxTotal: 930 });
    });

    it('bare arrays read on to the empty page', async () => {
      const { fetchPage, requests } = service(930, { cap: 50 });
      const { summary } = await readAll(fetchPage, 50, { startPage: 17, skipped: 850 });
      expect(requests).toEqual([17, 18, 19]);
      expect(summary).toMatchObject({ items: 80, endedBy: 'empty-page' });
    });

    it('counts the ceiling in pages read, and still catches an ignored `page`', async () => {
      const { fetchPage } = service(10_000, { cap: 10 });
      const { summary } = await readAll(fetchPage, 5, { startPage: 997, skipped: 9970 });
      expect(summary).toMatchObject({ pages: 4, items: 30 });
      const ignoring = service(500, { ignorePage: true });
      await expect(readAll(ignoring.fetchPage, 50, { startPage: 3, skipped: 300 })).rejects.toThrow(
        PaginationError,
      );
      expect(ignoring.requests).toEqual([3, 4]);
    });
  });
});
