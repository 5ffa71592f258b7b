/**
 * Far-future and far-past timestamps on chosen records, and the service fixing them later: the record's
 * true state then reads as a newer update, so a worker that refused the odd version can take the true one.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startSimulator } from '../../src/sim/server.js';
import { EPOCH, FAR_FUTURE, FAR_PAST } from '../../src/sim/switches.js';
import type { RunningSimulator, SimPayment } from '../../src/sim/types.js';
import { ORG, TRANSFERS, firstOrg, pages } from '../helpers/sim-http.js';

const NOW = new Date('2024-06-15T12:00:00.000Z');
let sim: RunningSimulator;
let org: string;
let key: string;

beforeAll(async () => {
  sim = await startSimulator({ seed: 9, now: NOW, days: 2, perDay: 20 });
  ({ org, key } = firstOrg(sim));
});
afterAll(() => sim.stop());

const served = async (path: string) =>
  new Map((await pages(sim, path, key, 50)).flat().map((r) => [r.id, r]));
const seconds = (iso: string) => Date.parse(iso) / 1000;

describe('odd timestamps on chosen records', () => {
  it('serves year 9999, 1999 and 1970 where asked; the truth and the rest are unchanged', async () => {
    const [a, b, c, d] = sim.payments(org) as [SimPayment, SimPayment, SimPayment, SimPayment];
    sim.setSwitches({
      timestampOverrides: {
        [a.id]: { updatedAt: FAR_FUTURE },
        [b.id]: { createdAt: FAR_PAST },
        [c.id]: { createdAt: EPOCH, updatedAt: EPOCH },
      },
    });
    const list = await served(ORG);
    expect(list.get(a.id)).toEqual({ ...a, updatedAt: '9999-12-31T23:59:59.000Z' });
    expect(list.get(b.id)).toEqual({ ...b, createdAt: '1999-12-31T23:59:59.000Z' });
    expect(list.get(c.id)).toEqual({ ...c, createdAt: EPOCH, updatedAt: EPOCH });
    expect(list.get(d.id)).toEqual(d);
    expect(sim.payments(org)[0]).toEqual(a);
    // still listed by its true createdAt: a window around it finds it, the claimed 1999 does not matter
    const around = `${ORG}?dateFrom=${seconds(b.createdAt) - 1}&dateTo=${seconds(b.createdAt) + 1}`;
    expect((await served(around)).has(b.id)).toBe(true);
  });

  it('removing an override is the service fixing the record: its true state with a newer updatedAt', async () => {
    const transfer = sim.transfers(org)[0] as { id: string; updatedAt: string };
    const payment = sim.payments(org)[0] as SimPayment;
    sim.setSwitches({
      timestampOverrides: { [payment.id]: { updatedAt: FAR_FUTURE }, [transfer.id]: { updatedAt: FAR_PAST } },
    });
    expect((await served(TRANSFERS)).get(transfer.id)?.updatedAt).toBe(FAR_PAST);
    sim.advance(60_000);
    const fixedAt = sim.now().toISOString();
    sim.setSwitches({ timestampOverrides: { [payment.id]: { updatedAt: FAR_FUTURE } } });
    const fixed = (await served(TRANSFERS)).get(transfer.id);
    expect(fixed?.updatedAt).toBe(fixedAt);
    expect(fixedAt > transfer.updatedAt).toBe(true);
    expect(sim.transfers(org)[0]).toEqual(fixed);
    expect((await served(ORG)).get(payment.id)?.updatedAt).toBe(FAR_FUTURE);
    sim.advance(60_000);
    sim.setSwitches({ timestampOverrides: {} });
    const truth = sim.payments(org)[0] as SimPayment;
    expect(truth).toEqual({ ...payment, status: truth.status, updatedAt: sim.now().toISOString() });
    expect((await served(ORG)).get(payment.id)).toEqual(truth);
  });

  it('refuses an override that is not a timestamp', async () => {
    const res = await fetch(`${sim.url}/__sim/switches`, {
      method: 'POST',
      body: JSON.stringify({ timestampOverrides: { x: { updatedAt: 'soon' } } }),
    });
    expect(res.status).toBe(400);
    expect(() => sim.setSwitches({ timestampOverrides: { x: { deletedAt: FAR_PAST } as never } })).toThrow(
      /timestampOverrides/,
    );
  });
});
