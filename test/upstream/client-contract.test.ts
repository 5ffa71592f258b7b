/**
 * The client against the simulator (real HTTP on 127.0.0.1), one rule of the service's interface
 * (docs/upstream.md) at a time: auth per endpoint with the exact bodies, initialize's 400 rules, filters, both list shapes, and
 * paging under every cap, shape and ordering the open points allow.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import {
  PaginationError,
  UpstreamAuthError,
  UpstreamBadRequestError,
  UpstreamForbiddenError,
} from '../../src/errors.js';
import { startSimulator } from '../../src/sim/server.js';
import type { RunningSimulator, SimPayment } from '../../src/sim/types.js';
import { validatePayments, validateTransfers } from '../../src/upstream/schemas.js';
import { caught, clientFor, everyRendering, readAll } from '../helpers/upstream.js';

let sim: RunningSimulator;
let org: string;
let orgKey: string;
const NOW = new Date('2024-05-10T12:00:00Z');

beforeAll(async () => {
  sim = await startSimulator({ seed: 11, days: 2, perDay: 60, now: NOW, clock: 'manual' });
  org = sim.organisations[0] as string;
  orgKey = sim.keys.organisation[org] as string;
});
afterAll(() => sim.stop());
beforeEach(() => {
  sim.setSwitches({
    shape: 'wrapper',
    pageCap: null,
    paymentOrder: 'asc',
    transferOrder: 'asc',
    ignorePage: false,
  });
  sim.setSwitches({ totalOffset: 0, initializeStatus: 201 });
  sim.clearRequestLog();
});

const ids = (items: readonly { id?: unknown }[]) => items.map((item) => String(item.id)).sort();
const seconds = (iso: string) => Math.floor(Date.parse(iso) / 1000);

describe('authentication, per endpoint, with the exact bodies and no retry', () => {
  const body = { amount: 100, description: 'x' };
  const cases = [
    ['by-key list', 'api-key', (c: ReturnType<typeof clientFor>) => c.listPayments({ page: 0, size: 5 })],
    [
      'organisation list',
      'organisation',
      (c: ReturnType<typeof clientFor>) => c.listPayments({ page: 0, size: 5 }),
    ],
    [
      'transfer list',
      'organisation',
      (c: ReturnType<typeof clientFor>) => c.listTransfers({ page: 0, size: 5 }),
    ],
    ['initialize', 'organisation', (c: ReturnType<typeof clientFor>) => c.initializePayment(body)],
  ] as const;
  const unauthorized: Record<string, [string, string]> = {
    'by-key list': ['/api/paiements/api-key', 'Invalid API key'],
    'organisation list': ['/api/paiements/organisations', 'Invalid or missing API key'],
    'transfer list': ['/api/transferts', 'Invalid or missing API key'],
    initialize: ['/api/paiements/initialize', 'Invalid or missing API key'],
  };

  it.each(cases)('an invalid key on the %s is a 401 naming the endpoint', async (name, scope, call) => {
    const key = 'sk_test_not_a_real_key_0123456789';
    const error = await caught(call(clientFor(sim.url, key, scope)));
    const [endpoint, message] = unauthorized[name] as [string, string];
    expect(error).toBeInstanceOf(UpstreamAuthError);
    expect(error).toMatchObject({ status: 401, endpoint, source: 'test', code: 'UPSTREAM_UNAUTHORIZED' });
    expect(error.message).toContain(`401 ${message};`);
    expect(error.message).toContain(endpoint);
    expect(everyRendering(error)).not.toContain(key);
    expect(sim.requestLog()).toHaveLength(1);
  });

  it('a key without rights gets each list endpoint’s own 403 message', async () => {
    const forbidden = sim.keys.forbidden;
    const byKey = await caught(clientFor(sim.url, forbidden, 'api-key').listPayments({ page: 0, size: 5 }));
    expect(byKey).toBeInstanceOf(UpstreamForbiddenError);
    expect(byKey.message).toContain('403 API key does not have permission to access payments');
    const orgList = await caught(clientFor(sim.url, forbidden).listPayments({ page: 0, size: 5 }));
    expect(orgList.message).toContain('403 Forbidden resource');
    expect(orgList).toMatchObject({ endpoint: '/api/paiements/organisations', status: 403 });
    const transfers = await caught(clientFor(sim.url, forbidden).listTransfers({ page: 0, size: 5 }));
    expect(transfers).toMatchObject({ endpoint: '/api/transferts', status: 403 });
    for (const error of [byKey, orgList, transfers]) expect(everyRendering(error)).not.toContain(forbidden);
    expect(sim.requestLog()).toHaveLength(3);
  });

  it('a by-key-only key reads its own list but is refused the organisation list', async () => {
    const key = sim.keys.byKeyOnly;
    const page = await clientFor(sim.url, key, 'api-key').listPayments({ page: 0, size: 5 });
    expect(page.items.length).toBeGreaterThan(0);
    await expect(clientFor(sim.url, key).listPayments({ page: 0, size: 5 })).rejects.toThrow(
      UpstreamForbiddenError,
    );
  });

  it('a revoked key fails with 401 from then on', async () => {
    const extra = await startSimulator({ seed: 3, days: 1, perDay: 5, apiKeys: ['sk_revoke_me_42'] });
    try {
      const client = clientFor(extra.url, 'sk_revoke_me_42');
      await client.listTransfers({ page: 0, size: 5 });
      extra.revokeKey('sk_revoke_me_42');
      await expect(client.listTransfers({ page: 0, size: 5 })).rejects.toThrow(UpstreamAuthError);
    } finally {
      await extra.stop();
    }
  });
});

describe('initialize', () => {
  it('refuses an invalid body before sending, in the service’s own words', async () => {
    const client = clientFor(sim.url, orgKey);
    const bodies = [
      { amount: 0, description: '' },
      { amount: -5, description: 'ok' },
      { amount: Number.NaN, description: 'ok' },
      { description: 'no amount' },
      { amount: 10 },
      { amount: 10, description: 'ok', extra_data: [] },
    ];
    for (const body of bodies) {
      const local = await caught(client.initializePayment(body as never));
      expect(local).toBeInstanceOf(UpstreamBadRequestError);
      expect(local.message).toMatch(/^request not sent/);
      // The simulator's answer to the same body, sent raw, has the same messages.
      const raw = await fetch(`${sim.url}/api/paiements/initialize`, {
        method: 'POST',
        headers: { 'x-api-key': orgKey, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(raw.status).toBe(400);
      const answer = (await raw.json()) as { message: string[] };
      expect((local as UpstreamBadRequestError).messages).toEqual(answer.message);
    }
    expect(sim.requestLog().filter((r) => r.status !== 400)).toHaveLength(0);
    expect(sim.requestLog()).toHaveLength(bodies.length); // only the raw ones
  });

  it.each([200, 201] as const)('creates an INIT payment when the service answers %i', async (status) => {
    sim.setSwitches({ initializeStatus: status });
    const client = clientFor(sim.url, orgKey);
    const created = await client.initializePayment({
      amount: 1500.5,
      description: 'Order 7',
      extra_data: { order: 7 },
    });
    expect(created).toMatchObject({ amount: '1500.5', payment_status: 'INIT', currency: 'XOF' });
    expect(created.launch_url).toBe(`${sim.paymentUrl}/${created.reference}`);
    const listed = sim.payments(org).find((p) => p.reference === created.reference) as SimPayment;
    expect(listed).toMatchObject({ status: 'INIT', extra_data: { order: 7 }, description: 'Order 7' });
  });
});

describe('filters', () => {
  const truth = () => sim.payments(org);
  const all = (
    query: Record<string, unknown>,
    key = orgKey,
    scope: 'organisation' | 'api-key' = 'organisation',
  ) => {
    const client = clientFor(sim.url, key, scope);
    return readAll((page) => client.listPayments({ page, size: 25, ...query }), 25);
  };

  it('status and transaction_type select exactly the matching payments', async () => {
    const { items } = await all({ status: 'COMPLETE', transaction_type: 'DIRECT_PAYMENT' });
    const expected = truth().filter(
      (p) => p.status === 'COMPLETE' && p.transaction_type === 'DIRECT_PAYMENT',
    );
    expect(expected.length).toBeGreaterThan(0);
    expect(ids(items)).toEqual(ids(expected));
  });

  it('dateFrom/dateTo are sent as Unix seconds and select the window', async () => {
    const from = seconds('2024-05-09T00:00:00Z');
    const to = seconds('2024-05-09T12:00:00Z');
    const { items } = await all({ dateFrom: from, dateTo: to });
    const inside = truth().filter(
      (p) => Date.parse(p.createdAt) >= from * 1000 && Date.parse(p.createdAt) <= to * 1000,
    );
    expect(inside.length).toBeGreaterThan(0);
    expect(ids(items)).toEqual(ids(inside));
  });

  it('the api-key scope lists only the payments made with the key', async () => {
    const { items } = await all({}, orgKey, 'api-key');
    const keyIds = new Set(items.map((p) => p.api_key_id));
    expect(keyIds.size).toBe(1);
    expect(items.length).toBeLessThan(truth().length);
    expect(validatePayments(items).rejects).toEqual([]);
  });
});

describe('list shapes', () => {
  it('a bare array becomes a page without wrapper evidence', async () => {
    sim.setSwitches({ shape: 'array' });
    const page = await clientFor(sim.url, orgKey).listPayments({ page: 1, size: 4 });
    expect(page).toMatchObject({ shape: 'array', total: null, totalPages: null, page: null, size: null });
    expect(page.requested).toEqual({ page: 1, size: 4 });
    expect(page.items).toHaveLength(4);
  });

  it('a wrapper keeps total, page, size and totalPages', async () => {
    const page = await clientFor(sim.url, orgKey).listTransfers({ page: 1, size: 4 });
    const total = sim.transfers(org).length;
    expect(page).toMatchObject({
      shape: 'wrapper',
      total,
      page: 1,
      size: 4,
      totalPages: Math.ceil(total / 4),
    });
    expect(validateTransfers(page.items).rejects).toEqual([]);
  });
});

describe('paging under every cap, shape and ordering', () => {
  const combos = (['array', 'wrapper', 'alternate'] as const).flatMap((shape) =>
    ([null, 7] as const).flatMap((pageCap) =>
      (['asc', 'desc', 'unordered'] as const).map((order) => ({ shape, pageCap, order })),
    ),
  );

  it.each(combos)('payments and transfers: %o reads every record once', async ({ shape, pageCap, order }) => {
    sim.setSwitches({ shape, pageCap, paymentOrder: order, transferOrder: order });
    const client = clientFor(sim.url, orgKey);
    const payments = await readAll((page) => client.listPayments({ page, size: 20 }), 20);
    expect(payments.items).toHaveLength(sim.payments(org).length);
    expect(ids(payments.items)).toEqual(ids(sim.payments(org)));
    const transfers = await readAll((page) => client.listTransfers({ page, size: 20 }), 20);
    expect(ids(transfers.items)).toEqual(ids(sim.transfers(org)));
    const expectedShape = shape === 'alternate' ? 'mixed' : shape;
    expect(payments.summary.shape).toBe(expectedShape);
    if (shape === 'array') expect(payments.summary.endedBy).toBe('empty-page');
    if (shape === 'wrapper') expect(payments.summary.maxTotal).toBe(payments.items.length);
  });

  it('a wrapper list ends on its last page without an extra request', async () => {
    const total = sim.payments(org).length;
    // A cap that leaves a short last page (a full one rightly costs one more, empty, page).
    const cap = [7, 8, 9, 11].find((c) => total % c !== 0) as number;
    sim.setSwitches({ pageCap: cap });
    const { summary } = await readAll(
      (page) => clientFor(sim.url, orgKey).listPayments({ page, size: 50 }),
      50,
    );
    expect(summary).toMatchObject({
      endedBy: 'wrapper-last-page',
      pages: Math.ceil(total / cap),
      maxTotal: total,
    });
  });

  it('a total that lies is reported, never trusted to stop early', async () => {
    sim.setSwitches({ totalOffset: -10 });
    const { items, summary } = await readAll(
      (page) => clientFor(sim.url, orgKey).listPayments({ page, size: 20 }),
      20,
    );
    expect(items).toHaveLength(sim.payments(org).length);
    expect(summary.maxTotal).toBe(items.length - 10);
  });

  it.each(['array', 'wrapper'] as const)(
    'an ignored `page` (%s) fails loudly after two requests',
    async (shape) => {
      sim.setSwitches({ shape, ignorePage: true });
      const client = clientFor(sim.url, orgKey);
      const error = await caught(readAll((page) => client.listPayments({ page, size: 10 }), 10));
      expect(error).toBeInstanceOf(PaginationError);
      expect(error.message).toMatch(/ignores `page`/);
      expect(sim.requestLog()).toHaveLength(2);
    },
  );
});
