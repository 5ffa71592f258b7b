/**
 * The simulator keeps the promises of the service's interface (docs/upstream.md) over real HTTP: exact auth bodies,
 * initialize validation, both list shapes, paging, orderings, date bounds, filters, scopes, statuses that
 * move with simulated time, malformed records the schemas refuse, determinism and faults.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startSimulator } from '../../src/sim/server.js';
import type { RunningSimulator, SimOptions, SimPayment } from '../../src/sim/types.js';
import { InitializedPaymentSchema, validatePayments, validateTransfers } from '../../src/upstream/schemas.js';

const NOW = new Date('2024-06-15T12:00:00.000Z');
const BASE: SimOptions = { seed: 42, now: NOW, days: 3, perDay: 40, organisations: 2 };
const BY_KEY = '/api/paiements/api-key';
const ORG = '/api/paiements/organisations';
const TRANSFERS = '/api/transferts';
const INIT = '/api/paiements/initialize';

let sim: RunningSimulator;
let org: string;
let orgKey: string;

function get(path: string, key?: string, s = sim): Promise<Response> {
  return fetch(`${s.url}${path}`, { headers: key === undefined ? {} : { 'X-API-Key': key } });
}

async function body(path: string, key = orgKey, s = sim): Promise<unknown> {
  const res = await get(path, key, s);
  expect(res.status).toBe(200);
  return res.json();
}

function post(path: string, payload: string, key?: string): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (key !== undefined) headers['X-API-Key'] = key;
  return fetch(`${sim.url}${path}`, { method: 'POST', headers, body: payload });
}

/** Every item of a list, paging until a short page. */
async function all(path: string, key = orgKey, s = sim): Promise<SimPayment[]> {
  const items: SimPayment[] = [];
  const sep = path.includes('?') ? '&' : '?';
  for (let page = 0; page < 1000; page++) {
    const data = (await body(`${path}${sep}page=${page}&size=100`, key, s)) as SimPayment[];
    items.push(...data);
    if (data.length < 100) return items;
  }
  throw new Error('paging did not end');
}

const ids = (items: { id: string }[]) => items.map((p) => p.id);
const seconds = (iso: string) => Date.parse(iso) / 1000;

beforeAll(async () => {
  sim = await startSimulator({ ...BASE, switches: { shape: 'array' } });
  org = sim.organisations[0] as string;
  orgKey = sim.keys.organisation[org] as string;
});
afterAll(() => sim.stop());

describe('authentication answers with the exact bodies of the interface', () => {
  const unauthorized = (message: string) => ({ statusCode: 401, message, error: 'Unauthorized' });
  const forbidden = (message: string) => ({ statusCode: 403, message, error: 'Forbidden' });

  it('401 for a missing or unknown key, worded per endpoint', async () => {
    for (const key of [undefined, 'sk_test_nope']) {
      expect(await (await get(BY_KEY, key)).json()).toEqual(unauthorized('Invalid API key'));
      expect(await (await get(ORG, key)).json()).toEqual(unauthorized('Invalid or missing API key'));
      expect(await (await get(TRANSFERS, key)).json()).toEqual(unauthorized('Invalid or missing API key'));
      const init = await post(INIT, '{"amount":1,"description":"x"}', key);
      expect([init.status, await init.json()]).toEqual([401, unauthorized('Invalid or missing API key')]);
    }
  });

  it('403 for a valid key without permission, worded per endpoint', async () => {
    const { byKeyOnly, forbidden: none } = sim.keys;
    expect((await get(BY_KEY, byKeyOnly)).status).toBe(200);
    for (const path of [ORG, TRANSFERS]) {
      const res = await get(path, byKeyOnly);
      expect([res.status, await res.json()]).toEqual([403, forbidden('Forbidden resource')]);
    }
    const denied = await get(BY_KEY, none);
    expect([denied.status, await denied.json()]).toEqual([
      403,
      forbidden('API key does not have permission to access payments'),
    ]);
    expect((await post(INIT, '{"amount":1,"description":"x"}', none)).status).toBe(403);
  });

  it('a revoked key gets 401 from then on', async () => {
    const s = await startSimulator(BASE);
    const key = s.keys.organisation[s.organisations[1] as string] as string;
    expect((await get(ORG, key, s)).status).toBe(200);
    s.revokeKey(key);
    expect((await get(ORG, key, s)).status).toBe(401);
    await s.stop();
  });
});

describe('initialize', () => {
  const rejects = async (payload: string, messages: string[]) => {
    const res = await post(INIT, payload, orgKey);
    expect([res.status, await res.json()]).toEqual([
      400,
      { statusCode: 400, message: messages, error: 'Bad Request' },
    ]);
  };

  it('answers 400 with one message per violated rule', async () => {
    await rejects('{}', ['amount must be a positive number', 'description should not be empty']);
    await rejects('{"amount":-5,"description":"","extra_data":[1]}', [
      'amount must be a positive number',
      'description should not be empty',
      'extra_data must be an object',
    ]);
    await rejects('{"amount":"100","description":"ok"}', ['amount must be a positive number']);
    await rejects('{"amount":0,"description":"ok","extra_data":"x"}', [
      'amount must be a positive number',
      'extra_data must be an object',
    ]);
    expect((await post(INIT, 'not json', orgKey)).status).toBe(400);
  });

  it('creates an INIT payment listed in both scopes, launch_url on the payment url', async () => {
    const res = await post(
      INIT,
      '{"amount":1500.5,"description":"Café ✓","extra_data":{"a":{"b":1}}}',
      orgKey,
    );
    expect(res.status).toBe(201);
    const created = InitializedPaymentSchema.parse(await res.json());
    expect(created).toMatchObject({ amount: '1500.5', payment_status: 'INIT', currency: 'XOF' });
    expect(created.launch_url).toBe(`${sim.paymentUrl}/${created.reference}`);
    const from = Math.floor(NOW.getTime() / 1000);
    for (const path of [BY_KEY, ORG]) {
      const found = (await all(`${path}?dateFrom=${from}`)).find((p) => p.reference === created.reference);
      expect(found).toMatchObject({
        status: 'INIT',
        transaction_type: 'PAYMENT',
        phone: null,
        amount: 1500.5,
      });
      expect(found?.extra_data).toEqual({ a: { b: 1 } });
      expect(found?.api_key_id).toMatch(/^key_/);
      expect(found?.createdAt).toBe(created.when_created);
    }
  });
});

describe('lists', () => {
  it('every valid record passes the client schemas; types and operators are mixed', () => {
    const truth = sim.payments(org);
    expect(validatePayments(truth).rejects).toEqual([]);
    expect(validateTransfers(sim.transfers(org)).rejects).toEqual([]);
    expect(new Set(truth.map((p) => p.transaction_type)).size).toBe(4);
    expect(truth.filter((p) => p.transaction_type === 'PAYMENT').every((p) => p.phone === null)).toBe(true);
    expect(truth.some((p) => p.createdAt.endsWith('T00:00:00.000Z'))).toBe(true);
  });

  it('serves the wrapper shape, the bare array, or alternates between them', async () => {
    sim.setSwitches({ shape: 'wrapper' });
    const page = (await body(`${ORG}?size=5&page=1`)) as Record<string, unknown>;
    const total = sim.payments(org).length;
    expect(page).toMatchObject({ total, page: 1, size: 5, totalPages: Math.ceil(total / 5) });
    sim.setSwitches({ shape: 'alternate' });
    const shapes = [];
    for (let i = 0; i < 4; i++) shapes.push(Array.isArray(await body(`${ORG}?size=2`)));
    expect(new Set(shapes)).toEqual(new Set([true, false]));
    sim.setSwitches({ shape: 'array', totalOffset: 0 });
  });

  it('pages through the whole truth; pageCap caps silently, defaultPageSize applies, ignorePage repeats page 0', async () => {
    expect(ids(await all(ORG))).toEqual(ids(sim.payments(org)));
    sim.setSwitches({ pageCap: 7, defaultPageSize: 3 });
    expect(((await body(`${ORG}?size=50`)) as unknown[]).length).toBe(7);
    expect(((await body(ORG)) as unknown[]).length).toBe(3);
    sim.setSwitches({ pageCap: null, ignorePage: true });
    expect(await body(`${ORG}?size=4&page=3`)).toEqual(await body(`${ORG}?size=4&page=0`));
    sim.setSwitches({ ignorePage: false, defaultPageSize: 10 });
  });

  it('orders by createdAt then id ascending, descending, or a stable shuffle', async () => {
    const truth = ids(sim.payments(org));
    sim.setSwitches({ paymentOrder: 'desc' });
    expect(ids(await all(ORG))).toEqual([...truth].reverse());
    sim.setSwitches({ paymentOrder: 'unordered' });
    const shuffled = ids(await all(ORG));
    expect(shuffled).not.toEqual(truth);
    expect([...shuffled].sort()).toEqual([...truth].sort());
    expect(ids(await all(ORG))).toEqual(shuffled);
    sim.setSwitches({ paymentOrder: 'asc' });
  });

  it('applies date bounds on whole seconds, inclusive or exclusive', async () => {
    const truth = sim.payments(org);
    const exact = truth.find((p) => p.createdAt.endsWith('.000Z')) as SimPayment;
    const second = seconds(exact.createdAt);
    const window = `${ORG}?dateFrom=${second}&dateTo=${second}`;
    expect(ids(await all(window))).toContain(exact.id);
    sim.setSwitches({ dateFromInclusive: false, dateToInclusive: false });
    expect(ids(await all(window))).not.toContain(exact.id);
    sim.setSwitches({ dateFromInclusive: true, dateToInclusive: true });
    const withMs = truth.find((p) => !p.createdAt.endsWith('.000Z')) as SimPayment;
    const floor = Math.floor(seconds(withMs.createdAt));
    expect(ids(await all(`${ORG}?dateFrom=${floor - 10}&dateTo=${floor}`))).not.toContain(withMs.id);
    const day = `${ORG}?dateFrom=${seconds('2024-06-14T00:00:00Z')}&dateTo=${seconds('2024-06-15T00:00:00Z')}`;
    const inDay = await all(day);
    expect(inDay.length).toBeGreaterThan(0);
    expect(
      inDay.every(
        (p) => p.createdAt >= '2024-06-14T00:00:00.000Z' && p.createdAt <= '2024-06-15T00:00:00.000Z',
      ),
    ).toBe(true);
  });

  it('filters by status and transaction_type', async () => {
    const truth = sim.payments(org);
    const complete = await all(`${ORG}?status=COMPLETE`);
    expect(ids(complete)).toEqual(ids(truth.filter((p) => p.status === 'COMPLETE')));
    const direct = await all(`${ORG}?transaction_type=DIRECT_PAYMENT`);
    expect(direct.length).toBeGreaterThan(0);
    expect(
      direct.every((p) => p.transaction_type === 'DIRECT_PAYMENT' && /^\+\d+$/.test(p.phone ?? '')),
    ).toBe(true);
  });

  it('scopes: the by-key list holds only the calling key’s payments, the org list holds them all', async () => {
    const orgList = await all(ORG);
    const mine = await all(BY_KEY);
    const keyIds = new Set(mine.map((p) => p.api_key_id));
    expect(keyIds.size).toBe(1);
    expect(mine.length).toBeLessThan(orgList.length);
    expect(ids(orgList.filter((p) => keyIds.has(p.api_key_id)))).toEqual(ids(mine));
    const byKeyOnly = await all(BY_KEY, sim.keys.byKeyOnly);
    expect(byKeyOnly.length).toBeGreaterThan(0);
    expect(byKeyOnly.some((p) => keyIds.has(p.api_key_id))).toBe(false);
    const other = sim.organisations[1] as string;
    const theirs = await all(ORG, sim.keys.organisation[other]);
    expect(theirs.every((p) => p.organization_id === other)).toBe(true);
  });

  it('lists the organisation’s transfers with page and size', async () => {
    const transfers = await all(TRANSFERS);
    expect(ids(transfers)).toEqual(ids(sim.transfers(org)));
    expect(new Set(transfers.map((t) => t.status))).toEqual(new Set(['PENDING', 'COMPLETE', 'FAILED']));
  });
});

describe('simulated time', () => {
  it('moves statuses forward and makes future records appear', async () => {
    const s = await startSimulator(BASE);
    const o = s.organisations[0] as string;
    const before = s.payments(o);
    const pending = before.filter((p) => p.status === 'INIT' || p.status === 'PENDING');
    s.advance(86_400_000);
    const after = new Map(s.payments(o).map((p) => [p.id, p]));
    expect(after.size).toBeGreaterThan(before.length);
    const moved = pending.filter((p) => after.get(p.id)?.status !== p.status);
    expect(moved.length).toBeGreaterThan(0);
    for (const p of moved) expect((after.get(p.id) as SimPayment).updatedAt > p.updatedAt).toBe(true);
    expect(s.now().getTime()).toBe(NOW.getTime() + 86_400_000);
    await s.stop();
  });

  it('drifts: new payments appear inside the requested window after each page', async () => {
    const s = await startSimulator({ ...BASE, switches: { driftPerPage: 2, shape: 'array' } });
    const o = s.organisations[0] as string;
    const key = s.keys.organisation[o] as string;
    const count = s.payments(o).length;
    await body(
      `${ORG}?dateFrom=${seconds('2024-06-13T00:00:00Z')}&dateTo=${seconds('2024-06-14T00:00:00Z')}`,
      key,
      s,
    );
    const added = s
      .payments(o)
      .slice()
      .filter((p) => p.id.includes('8000000'));
    expect(s.payments(o).length).toBe(count + 2);
    expect(added.every((p) => p.createdAt > '2024-06-13' && p.createdAt < '2024-06-14')).toBe(true);
    await s.stop();
  });
});

describe('malformed records and determinism', () => {
  it('malformed records fail the schemas and are not in the truth', async () => {
    const s = await startSimulator({ ...BASE, malformed: 8, switches: { shape: 'array' } });
    const o = s.organisations[0] as string;
    const key = s.keys.organisation[o] as string;
    const served = await all(ORG, key, s);
    const { valid, rejects } = validatePayments(served);
    expect(rejects.length).toBe(8);
    expect(valid.length).toBe(s.payments(o).length);
    expect(s.payments(o).some((p) => String(p.id).startsWith('bad_'))).toBe(false);
    expect(validateTransfers(await all(TRANSFERS, key, s)).rejects.length).toBe(8);
    await s.stop();
  });

  it('the same seed gives the same data; another seed does not', async () => {
    const [a, b, c] = await Promise.all([
      startSimulator(BASE),
      startSimulator(BASE),
      startSimulator({ ...BASE, seed: 43 }),
    ]);
    expect(a.keys).toEqual(b.keys);
    expect(a.payments(a.organisations[0] as string)).toEqual(b.payments(b.organisations[0] as string));
    expect(a.transfers(a.organisations[1] as string)).toEqual(b.transfers(b.organisations[1] as string));
    expect(c.organisations).not.toEqual(a.organisations);
    await Promise.all([a.stop(), b.stop(), c.stop()]);
  });
});

describe('faults and control routes', () => {
  it('429 with Retry-After, 5xx, not-JSON and resets, each at rate 1; none at rate 0', async () => {
    sim.setSwitches({ rateLimitRate: 1, retryAfterSeconds: 7 });
    const limited = await get(ORG, orgKey);
    expect([limited.status, limited.headers.get('retry-after')]).toEqual([429, '7']);
    sim.setSwitches({ rateLimitRate: 0, serverErrorRate: 1 });
    for (let i = 0; i < 5; i++) expect([500, 502, 503]).toContain((await get(ORG, orgKey)).status);
    sim.setSwitches({ serverErrorRate: 0, notJsonRate: 1 });
    const html = await get(ORG, orgKey);
    expect(html.status).toBe(200);
    await expect(html.json()).rejects.toThrow();
    sim.setSwitches({ notJsonRate: 0, resetRate: 1 });
    await expect(get(ORG, orgKey)).rejects.toThrow();
    sim.setSwitches({ resetRate: 0 });
    expect((await get(ORG, orgKey)).status).toBe(200);
    expect(sim.requestLog().some((e) => e.status === 0)).toBe(true);
  });

  it('steers a simulator over /__sim/ without a key', async () => {
    const state = (await (await get('/__sim/state')).json()) as { now: string; keys: unknown };
    expect(state.keys).toEqual(sim.keys);
    const before = sim.now().getTime();
    const advanced = await fetch(`${sim.url}/__sim/advance`, { method: 'POST', body: '{"ms":1000}' });
    expect(advanced.status).toBe(200);
    expect(sim.now().getTime()).toBe(before + 1000);
    const bad = await fetch(`${sim.url}/__sim/switches`, { method: 'POST', body: '{"shape":"csv"}' });
    expect(bad.status).toBe(400);
    await fetch(`${sim.url}/__sim/switches`, { method: 'POST', body: '{"pageCap":5}' });
    expect(sim.switches().pageCap).toBe(5);
    sim.setSwitches({ pageCap: null });
    const truth = await (await get(`/__sim/truth?org=${org}&stream=transfers`)).json();
    expect(truth).toEqual(sim.transfers(org));
    expect((await get('/__sim/requests')).status).toBe(200);
  });
});
