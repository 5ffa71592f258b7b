/**
 * A `total` that grows with every page (a broken or hostile service) once kept paysync reading to the
 * 10,000-page ceiling on every tick. Past half as many pages again as the first page's total needed, the
 * read ends as incomplete; a total that grows a little while paging (records arriving) is still followed.
 */
import { describe, expect, it } from '@jest/globals';
import { PaginationError } from '../../src/errors.js';
import type { ListPage } from '../../src/upstream/list-page.js';
import { readPages } from '../../src/upstream/paging.js';

const SIZE = 10;

function wrapper(index: number, total: number): ListPage {
  const items = Array.from({ length: SIZE }, (_, i) => ({ id: `r${index * SIZE + i}` }));
  return {
    items,
    shape: 'wrapper',
    total,
    totalPages: Math.ceil(total / SIZE),
    page: index,
    size: SIZE,
    requested: { page: index, size: SIZE },
  };
}

async function pagesRead(totalAt: (index: number) => number): Promise<{ pages: number; error: unknown }> {
  let pages = 0;
  try {
    for await (const _ of readPages(
      async (i) => {
        pages += 1;
        return i * SIZE >= totalAt(i) ? { ...wrapper(i, totalAt(i)), items: [] } : wrapper(i, totalAt(i));
      },
      { size: SIZE, maxPages: 10_000, endpoint: '/api/transferts' },
    ));
    return { pages, error: null };
  } catch (error) {
    return { pages, error };
  }
}

describe('a growing total', () => {
  it('that grows with every page ends the read as incomplete after a bounded number of pages', async () => {
    const { pages, error } = await pagesRead((i) => 100 + i * SIZE * 2);
    expect(error).toBeInstanceOf(PaginationError);
    expect((error as Error).message).toMatch(
      /total grew from 100 \(first page\) to \d+ while paging; stopped after 17 pages/,
    );
    expect(pages).toBe(17);
  });

  it('that grows a little while paging is followed to the end', async () => {
    const { pages, error } = await pagesRead((i) => 100 + Math.min(i, 5));
    expect(error).toBeNull();
    expect(pages).toBeGreaterThanOrEqual(11);
  });
});
