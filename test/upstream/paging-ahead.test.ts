/**
 * Pages of one window asked for at once, once the service said how many there are: their answers may
 * arrive in any order, and the read still yields the same pages, the same records and the same summary
 * (the verdict's evidence) as a read one page at a time. Bare arrays, which say nothing of how many pages
 * there are, stay one page at a time. Without a server and without timers: the fake service below answers
 * its pending requests in reverse order whenever the reader waits.
 */
import { describe, expect, it } from '@jest/globals';
import type { ListPage } from '../../src/upstream/list-page.js';
import { lastPageOf, readPages, type PagingSummary } from '../../src/upstream/paging.js';

const records = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `r${i}` }));

interface Service {
  fetchPage: (page: number) => Promise<ListPage>;
  /** Pages requested, in the order asked; and the most requests pending at once. */
  asked: number[];
  mostPending: () => number;
}

/**
 * `n` records served `cap` a page, as a wrapper (total, totalPages, size) or a bare array. Requests are
 * held and answered newest first, all pending ones at each microtask turn the reader spends waiting.
 */
function service(n: number, cap: number, shape: 'wrapper' | 'array', opts: { totalPages?: boolean } = {}) {
  const all = records(n);
  const asked: number[] = [];
  let pending: Array<() => void> = [];
  let most = 0;
  const answerNewestFirst = () => {
    const now = pending.reverse();
    pending = [];
    for (const answer of now) answer();
  };
  const fetchPage = (page: number): Promise<ListPage> => {
    asked.push(page);
    const items = all.slice(page * cap, page * cap + cap);
    const requested = { page, size: cap };
    const body: ListPage =
      shape === 'array'
        ? { items, shape, total: null, totalPages: null, page: null, size: null, requested }
        : {
            items,
            shape,
            total: n,
            totalPages: opts.totalPages === false ? null : Math.ceil(n / cap),
            page,
            size: cap,
            requested,
          };
    return new Promise<ListPage>((resolve) => {
      pending.push(() => resolve(body));
      most = Math.max(most, pending.length);
      queueMicrotask(() => queueMicrotask(answerNewestFirst));
    });
  };
  return { fetchPage, asked, mostPending: () => most } satisfies Service;
}

async function read(s: Service, cap: number, ahead?: number) {
  const pages: Array<{ index: number; ids: string[] }> = [];
  const gen = readPages(s.fetchPage, {
    size: cap,
    maxPages: 1000,
    endpoint: '/api/test',
    ...(ahead !== undefined ? { ahead: () => ahead } : {}),
  });
  for (;;) {
    const next = await gen.next();
    if (next.done) return { pages, summary: next.value as PagingSummary };
    pages.push({ index: next.value.index, ids: next.value.items.map((i) => (i as { id: string }).id) });
  }
}

describe('pages of a window read at once', () => {
  it('arrive in any order and give the same pages, rows and summary as one at a time', async () => {
    for (const [n, cap] of [
      [1000, 100],
      [1001, 100],
      [999, 50],
      [30, 100],
    ] as const) {
      const one = await read(service(n, cap, 'wrapper'), cap);
      const ahead = service(n, cap, 'wrapper');
      const many = await read(ahead, cap, 8);
      expect(many).toEqual(one);
      expect(many.pages.flatMap((p) => p.ids)).toEqual(records(n).map((r) => r.id));
      if (n > cap * 2) expect(ahead.mostPending()).toBeGreaterThan(1); // really several at once
      expect(ahead.asked.length).toBe(one.pages.length); // and no page asked twice or past the end
    }
  });

  it('from total and the page size when the service sends no totalPages', async () => {
    const one = await read(service(450, 100, 'wrapper', { totalPages: false }), 100);
    const s = service(450, 100, 'wrapper', { totalPages: false });
    expect(await read(s, 100, 8)).toEqual(one);
    expect(s.mostPending()).toBeGreaterThan(1);
  });

  it('bare arrays stay one page at a time: nothing says how many pages there are', async () => {
    const s = service(450, 100, 'array');
    const one = await read(service(450, 100, 'array'), 100);
    expect(await read(s, 100, 8)).toEqual(one);
    expect(s.mostPending()).toBe(1);
    expect(
      lastPageOf(
        {
          ...one.pages[0],
          items: [],
          shape: 'array',
          total: null,
          totalPages: null,
          page: null,
          size: null,
          requested: { page: 0, size: 100 },
        },
        100,
      ),
    ).toBeNull();
  });

  it('never more at once than `ahead` allows', async () => {
    const s = service(2000, 100, 'wrapper');
    await read(s, 100, 3);
    expect(s.mostPending()).toBeLessThanOrEqual(3);
  });
});
