/**
 * A service that lists a record twice within its interface: `total` counts both listings (or, in place
 * of another record, which is then not listed, the true count); the copy sits
 * on the same page or on a later one; a contradicting copy changes status or amount with a later, an
 * earlier or the same `updatedAt`; the same records every read and for the same seed. And a wrapper
 * whose `total` no list can have.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startSimulator } from '../../src/sim/server.js';
import type { RunningSimulator, SimOptions } from '../../src/sim/types.js';
import { ORG, type Wrapper, body, firstOrg, ids, pages } from '../helpers/sim-http.js';

const BASE: SimOptions = { seed: 5, now: new Date('2024-06-15T12:00:00.000Z'), days: 1, perDay: 30 };
let sim: RunningSimulator;
let org: string;
let key: string;

beforeAll(async () => {
  sim = await startSimulator(BASE);
  ({ org, key } = firstOrg(sim));
});
afterAll(() => sim.stop());

/** Positions (page, index) of every listing of `id`. */
function where(read: { id: unknown }[][], id: string): number[][] {
  return read.flatMap((items, page) => items.flatMap((item, i) => (item.id === id ? [[page, i]] : [])));
}

describe('records listed twice', () => {
  it('a given record twice, right after itself: total counts both, the copy on the same page', async () => {
    const truth = ids(sim.payments(org));
    const twice = truth[2] as string;
    sim.setSwitches({ duplicateIds: [twice], duplicateOffset: 1 });
    const first = (await body(sim, `${ORG}?page=0&size=5`, key)) as Wrapper;
    expect(first.total).toBe(truth.length + 1);
    expect(first.totalPages).toBe(Math.ceil((truth.length + 1) / 5));
    const read = await pages(sim, ORG, key, 5);
    expect(where(read, twice)).toEqual([
      [0, 2],
      [0, 3],
    ]);
    expect(read.flat().length).toBe(truth.length + 1);
    expect(new Set(ids(read.flat()))).toEqual(new Set(truth));
  });

  it('in place of another record: that one is not listed, total stays the true count, by status too', async () => {
    const truth = sim.payments(org);
    const [twice, gone] = [truth[2]!, truth[3]!];
    sim.setSwitches({ duplicateIds: [twice.id], duplicateOffset: 1, duplicateInPlace: true });
    expect(sim.copies(org, 'payments').map((c) => [c.original.id, c.displaced?.id])).toEqual([
      [twice.id, gone.id],
    ]);
    const first = (await body(sim, `${ORG}?page=0&size=5`, key)) as Wrapper;
    expect(first.total).toBe(truth.length);
    const read = await pages(sim, ORG, key, 5);
    expect(where(read, twice.id)).toEqual([
      [0, 2],
      [0, 3],
    ]);
    expect(where(read, gone.id)).toEqual([]);
    expect(read.flat().length).toBe(truth.length);
    const status = gone.status;
    const byStatus = (await body(sim, `${ORG}?page=0&size=1&status=${status}`, key)) as Wrapper;
    expect(byStatus.total).toBe(truth.filter((p) => p.status === status).length);
    sim.setSwitches({ duplicateIds: [], duplicateInPlace: false });
  });

  it('with an offset of a page or more the copy lands on a later page', async () => {
    const twice = ids(sim.payments(org))[1] as string;
    sim.setSwitches({ duplicateIds: [twice], duplicateOffset: 12 });
    const placed = where(await pages(sim, ORG, key, 5), twice);
    expect(placed.map(([page]) => page)).toEqual([0, 2]);
    sim.setSwitches({ duplicateIds: [], duplicateOffset: 1 });
  });

  it('a fraction of records, the same ones on every read and for the same seed', async () => {
    sim.setSwitches({ duplicateRate: 0.3, duplicateOffset: 7 });
    const read = (await pages(sim, ORG, key, 4)).flat();
    const counts = new Map<unknown, number>();
    for (const id of ids(read)) counts.set(id, (counts.get(id) ?? 0) + 1);
    const doubled = [...counts].filter(([, n]) => n === 2).map(([id]) => id);
    expect([...counts.values()].every((n) => n <= 2)).toBe(true);
    expect(doubled.length).toBeGreaterThan(3);
    expect(doubled.length).toBeLessThan(counts.size);
    expect(((await body(sim, `${ORG}?size=4`, key)) as Wrapper).total).toBe(read.length);
    expect(ids((await pages(sim, ORG, key, 4)).flat())).toEqual(ids(read));
    expect(ids(sim.copies(org, 'payments').map((c) => c.original as { id: unknown }))).toEqual(
      ids(sim.payments(org)).filter((id) => doubled.includes(id)),
    );
    const twin = await startSimulator({ ...BASE, switches: { duplicateRate: 0.3, duplicateOffset: 7 } });
    expect(ids((await pages(twin, ORG, key, 4)).flat())).toEqual(ids(read));
    await twin.stop();
    sim.setSwitches({ duplicateRate: 0, duplicateOffset: 1 });
  });

  it('transfers can be listed twice too', async () => {
    const truth = ids(sim.transfers(org));
    sim.setSwitches({ duplicateIds: [truth[0] as string], duplicateOffset: 1 });
    const read = (await pages(sim, '/api/transferts', key, 3)).flat();
    expect(ids(read)).toEqual([truth[0], ...truth]);
    sim.setSwitches({ duplicateIds: [] });
  });
});

describe('contradicting copies', () => {
  async function bothListings(variant: 'status' | 'amount', clock: 'later' | 'earlier' | 'same') {
    const original = sim.payments(org)[0] as { id: string };
    sim.setSwitches({
      duplicateIds: [original.id],
      duplicateOffset: 8,
      copyVariant: variant,
      copyUpdatedAt: clock,
    });
    const read = (await pages(sim, ORG, key, 5)).flat().filter((item) => item.id === original.id);
    const [pair] = sim.copies(org, 'payments');
    sim.setSwitches({ duplicateIds: [], copyVariant: 'identical', copyUpdatedAt: 'same' });
    expect(read).toEqual([pair?.original, pair?.copy]);
    expect(read[0]).toEqual(original); // the first listing is the truth
    return read as unknown as [Record<string, unknown>, Record<string, unknown>];
  }

  const ms = (iso: unknown) => Date.parse(iso as string);

  it('another status with a later updatedAt: the copy is the newer version', async () => {
    const [first, copy] = await bothListings('status', 'later');
    expect(copy.status).not.toBe(first.status);
    expect(['INIT', 'PENDING', 'COMPLETE', 'FAILED', 'TIMEOUT']).toContain(copy.status);
    expect(ms(copy.updatedAt) - ms(first.updatedAt)).toBe(1000);
    expect({ ...copy, status: first.status, updatedAt: first.updatedAt }).toEqual(first);
  });

  it('another amount with an earlier updatedAt: the first listing is the newer version', async () => {
    const [first, copy] = await bothListings('amount', 'earlier');
    expect(String(copy.amount).split('.')[1]).toBe(String(first.amount).split('.')[1]);
    expect(Math.trunc(copy.amount as number) - Math.trunc(first.amount as number)).toBe(1);
    expect(ms(copy.updatedAt) - ms(first.updatedAt)).toBe(-1000);
  });

  it('another status with the same updatedAt: a tie', async () => {
    const [first, copy] = await bothListings('status', 'same');
    expect(copy.status).not.toBe(first.status);
    expect(copy.updatedAt).toBe(first.updatedAt);
  });
});

describe('a total no list can have', () => {
  it.each([
    [3e9, '"total":3000000000', 3e9 / 5],
    [-5, '"total":-5', -1],
    [42.5, '"total":42.5', 9],
  ])('total %p replaces the true one; totalPages follows it', async (total, text, totalPages) => {
    sim.setSwitches({ totalOverride: total });
    const res = await fetch(`${sim.url}${ORG}?page=0&size=5`, { headers: { 'X-API-Key': key } });
    const raw = await res.text();
    expect(raw).toContain(text);
    const page = JSON.parse(raw) as Wrapper;
    expect([page.total, page.totalPages, page.data.length]).toEqual([total, totalPages, 5]);
    sim.setSwitches({ totalOverride: null });
  });

  it('switches are refused when malformed', async () => {
    const refuse = async (switches: unknown) =>
      (await fetch(`${sim.url}/__sim/switches`, { method: 'POST', body: JSON.stringify(switches) })).status;
    expect(await refuse({ duplicateRate: 2 })).toBe(400);
    expect(await refuse({ duplicateIds: 'x' })).toBe(400);
    expect(await refuse({ duplicateOffset: 0 })).toBe(400);
    expect(await refuse({ copyVariant: 'name' })).toBe(400);
    expect(await refuse({ totalOverride: 'many' })).toBe(400);
    expect(await refuse({ totalOverride: 3e9, duplicateIds: ['a'] })).toBe(200);
    sim.setSwitches({ totalOverride: null, duplicateIds: [] });
  });
});
