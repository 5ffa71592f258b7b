/**
 * A service whose records change shape: fields the interface does not list added to every record
 * (served verbatim, so a client can prove it keeps them exactly), and known fields dropped or retyped on
 * every record or a seeded fraction.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startSimulator } from '../../src/sim/server.js';
import { DEFAULT_EXTRA_FIELDS } from '../../src/sim/switches.js';
import type { RunningSimulator } from '../../src/sim/types.js';
import { validatePayments, validateTransfers } from '../../src/upstream/schemas.js';
import { ORG, TRANSFERS, firstOrg, ids, pages } from '../helpers/sim-http.js';

let sim: RunningSimulator;
let key: string;
let org: string;

beforeAll(async () => {
  sim = await startSimulator({ seed: 6, now: new Date('2024-06-15T12:00:00.000Z'), days: 1, perDay: 16 });
  ({ org, key } = firstOrg(sim));
});
afterAll(() => sim.stop());

const text = async (path: string) =>
  (await fetch(`${sim.url}${path}`, { headers: { 'X-API-Key': key } })).text();
const occurrences = (haystack: string, needle: string) => haystack.split(needle).length - 1;

describe('extra fields', () => {
  it('the default pair on every payment, as JSON text verbatim (125.50 keeps its zero); transfers untouched', async () => {
    sim.setSwitches({ paymentExtraFields: { ...DEFAULT_EXTRA_FIELDS } });
    const raw = await text(`${ORG}?size=100`);
    const count = sim.payments(org).length;
    expect(occurrences(raw, '"fee_amount":125.50,"channel":"ussd"}')).toBe(count);
    const served = (await pages(sim, ORG, key, 100)).flat();
    expect(served.map(({ fee_amount, channel, ...known }) => [fee_amount, channel, known])).toEqual(
      sim.payments(org).map((p) => [125.5, 'ussd', p]),
    );
    expect(await text(`${TRANSFERS}?size=100`)).not.toContain('fee_amount');
    sim.setSwitches({ paymentExtraFields: {} });
  });

  it('any names and values: a nested object, a number with more digits than a double holds, on transfers too', async () => {
    const extra = {
      fees: '{"currency":"XOF","parts":[1,2.50],"rule":null}',
      reconciliation_ref: '12345678901234567890.123456789',
      'odd name "quoted"': '"é\\u0000"',
    };
    sim.setSwitches({ transferExtraFields: extra });
    const raw = await text(`${TRANSFERS}?size=100`);
    const tail =
      ',"fees":{"currency":"XOF","parts":[1,2.50],"rule":null},"reconciliation_ref":12345678901234567890.123456789,"odd name \\"quoted\\"":"é\\u0000"}';
    expect(occurrences(raw, tail)).toBe(sim.transfers(org).length);
    expect(() => JSON.parse(raw)).not.toThrow();
    sim.setSwitches({ transferExtraFields: {} });
  });

  it('refuses a known name or a value that is not JSON text', () => {
    expect(() => sim.setSwitches({ paymentExtraFields: { amount: '1' } })).toThrow(/paymentExtraFields/);
    expect(() => sim.setSwitches({ transferExtraFields: { fee: 'not json' } })).toThrow(
      /transferExtraFields/,
    );
    expect(() => sim.setSwitches({ transferExtraFields: { fee: 1 as never } })).toThrow(
      /transferExtraFields/,
    );
  });
});

describe('known fields dropped or retyped', () => {
  it('phone missing on every payment, amount a string on every transfer: the client schemas refuse them', async () => {
    sim.setSwitches({
      fieldChanges: [
        { stream: 'payments', field: 'phone', to: 'missing', rate: 1 },
        { stream: 'transfers', field: 'amount', to: 'string', rate: 1 },
      ],
    });
    const payments = (await pages(sim, ORG, key, 100)).flat();
    expect(payments.every((p) => !('phone' in p))).toBe(true);
    expect(validatePayments(payments).valid).toEqual([]);
    const transfers = (await pages(sim, TRANSFERS, key, 100)).flat();
    expect(transfers.map((t) => t.amount)).toEqual(sim.transfers(org).map((t) => String(t.amount)));
    expect(validateTransfers(transfers).valid).toEqual([]);
    sim.setSwitches({ fieldChanges: [] });
  });

  it('a fraction: the same records every read, the rest untouched', async () => {
    sim.setSwitches({ fieldChanges: [{ stream: 'payments', field: 'status', to: 'null', rate: 0.5 }] });
    const read = (await pages(sim, ORG, key, 100)).flat();
    const changed = read.filter((p) => p.status === null);
    expect(changed.length).toBeGreaterThan(0);
    expect(changed.length).toBeLessThan(read.length);
    expect(ids((await pages(sim, ORG, key, 7)).flat().filter((p) => p.status === null))).toEqual(
      ids(changed),
    );
    const { valid, rejects } = validatePayments(read);
    expect(rejects.length).toBe(changed.length);
    expect(valid.length).toBe(read.length - changed.length);
    sim.setSwitches({ fieldChanges: [] });
  });

  it('refuses a field the stream does not have', () => {
    expect(() =>
      sim.setSwitches({
        fieldChanges: [{ stream: 'transfers', field: 'description', to: 'missing', rate: 1 }],
      }),
    ).toThrow(/fieldChanges/);
  });
});
