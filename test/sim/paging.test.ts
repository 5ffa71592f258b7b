/**
 * Paging that does not converge, within the interface: pages past the list's own `totalPages` that
 * repeat its last page or wrap round it for ever, a cycle back to an earlier page, and a trickle of one
 * new record per page, in both list shapes. The layout functions are pure and tested first.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { cycledPage, listingWithCopies, pagePlan, plainListing } from '../../src/sim/listing.js';
import { startSimulator } from '../../src/sim/server.js';
import type { RunningSimulator } from '../../src/sim/types.js';
import { ORG, type Wrapper, body, firstOrg, ids, pageItems } from '../helpers/sim-http.js';

const PLAIN = { pastEnd: 'empty', pageCycle: null, trickle: null } as const;
const positions = (length: number, page: number, size: number, a = {}) => {
  const plan = pagePlan(length, page, size, { ...PLAIN, ...a });
  return Array.from({ length: plan.count }, (_, i) => (plan.start + i) % length);
};

describe('layout (pure)', () => {
  it('lists copies after offset - 1 other records, the last ones at the end', () => {
    const listing = listingWithCopies(6, (i) => i === 1 || i === 4, 3);
    const laid = Array.from(
      { length: listing.length },
      (_, p) => `${listing.source(p)}${listing.isCopy(p) ? "'" : ''}`,
    );
    expect(laid).toEqual(['0', '1', '2', '3', "1'", '4', '5', "4'"]);
    expect(plainListing(3).source(2)).toBe(2);
  });

  it('plans plain pages, repeats, wraps, cycles and trickles', () => {
    expect(positions(9, 1, 4)).toEqual([4, 5, 6, 7]);
    expect(positions(9, 3, 4)).toEqual([]);
    expect(positions(9, 3, 4, { pastEnd: 'repeat-last' })).toEqual([5, 6, 7, 8]);
    expect(positions(3, 3, 4, { pastEnd: 'repeat-last' })).toEqual([0, 1, 2]);
    expect(positions(9, 3, 4, { pastEnd: 'wrap' })).toEqual([3, 4, 5, 6]);
    expect(positions(3, 1, 4, { pastEnd: 'wrap' })).toEqual([1, 2, 0, 1]);
    expect([4, 5, 6, 7, 8].map((p) => cycledPage(p, { after: 4, back: 1 }))).toEqual([1, 2, 3, 1, 2]);
    expect(positions(20, 5, 3, { pageCycle: { after: 4, back: 1 } })).toEqual([6, 7, 8]);
    expect(positions(9, 0, 4, { trickle: 1 })).toEqual([0, 1, 2, 3]);
    expect(positions(9, 2, 4, { trickle: 1 })).toEqual([2, 3, 4, 5]);
    expect(positions(9, 6, 4, { trickle: 1 })).toEqual([6, 7, 8]);
  });
});

describe('over HTTP', () => {
  let sim: RunningSimulator;
  let key: string;
  let truth: unknown[];
  const page = async (n: number, size = 4) => ids(await pageItems(sim, `${ORG}?page=${n}&size=${size}`, key));

  beforeAll(async () => {
    sim = await startSimulator({ seed: 3, now: new Date('2024-06-15T12:00:00.000Z'), days: 1, perDay: 14 });
    const first = firstOrg(sim);
    key = first.key;
    truth = ids(sim.payments(first.org));
    expect(truth.length).toBeGreaterThan(8); // longer than the cycle's four pages of two
  });
  afterAll(() => sim.stop());

  it('past totalPages: empty by default, the last full page again, or full pages wrapped round the list', async () => {
    const size = 4;
    const pagesOf = Math.ceil(truth.length / size);
    expect(await page(pagesOf)).toEqual([]);
    sim.setSwitches({ pastEnd: 'repeat-last' });
    const last = truth.slice(-size);
    expect(await page(pagesOf)).toEqual(last);
    expect(await page(pagesOf + 50)).toEqual(last);
    sim.setSwitches({ pastEnd: 'wrap' });
    const beyond = [await page(pagesOf), await page(pagesOf + 1), await page(pagesOf + 2)];
    for (const items of beyond) {
      expect(items).toHaveLength(size);
      expect(truth).toEqual(expect.arrayContaining(items));
    }
    expect(beyond[1]).not.toEqual(beyond[0]);
    const wrapper = (await body(sim, `${ORG}?page=${pagesOf + 2}&size=${size}`, key)) as Wrapper;
    expect([wrapper.total, wrapper.totalPages, wrapper.page]).toEqual([truth.length, pagesOf, pagesOf + 2]);
    sim.setSwitches({ pastEnd: 'empty' });
  });

  it('a cycle: from page 4 on, pages 1, 2, 3 again in turn (neither the first nor the previous)', async () => {
    sim.setSwitches({ pageCycle: { after: 4, back: 1 } });
    const read = [];
    for (let n = 0; n < 9; n++) read.push(await page(n, 2));
    expect(read.slice(4)).toEqual([read[1], read[2], read[3], read[1], read[2]]);
    expect(new Set(read.flat()).size).toBe(8);
    sim.setSwitches({ pageCycle: null });
  });

  it.each(['wrapper', 'array'] as const)(
    'a trickle (%s): each page one new record, the rest seen',
    async (shape) => {
      sim.setSwitches({ trickle: 1, shape });
      const seen = new Set<unknown>();
      const fresh: number[] = [];
      for (let n = 0; ; n++) {
        const items = await page(n, 5);
        fresh.push(items.filter((id) => !seen.has(id)).length);
        items.forEach((id) => seen.add(id));
        if (items.length < 5) break;
      }
      expect(fresh).toEqual([5, ...Array(truth.length - 5).fill(1), 0]);
      expect([...seen]).toEqual(truth);
      sim.setSwitches({ trickle: null, shape: 'wrapper' });
    },
  );
});
