import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { LosslessNumber, parseExactJson, toExactJson } from '../../src/upstream/exact-json.js';
import type { Payment } from '../../src/upstream/schemas.js';
import type { PageLoad } from '../../src/sync/ports.js';
import { loadPage } from '../../src/warehouse/loader.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { at, makePayment, makeTransfer } from '../helpers/records.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('loader');
});
afterAll(async () => {
  await db.drop();
});

const page = (records: Payment[], extra: Partial<PageLoad> = {}): PageLoad => ({
  source: 'default',
  stream: 'payments',
  organizationId: 'org_1',
  records,
  rejects: [],
  ...extra,
});

async function stored(id: string): Promise<Record<string, unknown>> {
  const { rows } = await db.pool.query(
    `SELECT id, reference, amount, description, status, transaction_type, phone, service_mobile_code,
            extra_data::text AS extra_data, created_at, updated_at, organization_id, api_key_id, source
       FROM reporting.payments WHERE id = $1`,
    [id],
  );
  return rows[0] as Record<string, unknown>;
}

async function history(id: string): Promise<string[]> {
  const { rows } = await db.pool.query<{ status: string }>(
    'SELECT status FROM reporting.payment_status_history WHERE payment_id = $1 ORDER BY updated_at, status',
    [id],
  );
  return rows.map((r) => r.status);
}

describe('loading a page of payments', () => {
  it('changes nothing when the same page is loaded twice, but records that it was seen', async () => {
    const records = [makePayment(), makePayment({ status: 'PENDING' }), makePayment({ phone: null })];
    expect(await loadPage(db.pool, page(records))).toMatchObject({ inserted: 3, updated: 0, unchanged: 0 });
    const before = await Promise.all(records.map((r) => stored(r.id)));
    const seen = await db.pool.query('SELECT max(synced_at) AS at FROM reporting.payments WHERE id = $1', [
      records[0]?.id,
    ]);
    const again = await loadPage(db.pool, page(records));
    expect(again).toEqual({ inserted: 0, updated: 0, unchanged: 3, stale: 0, rejects: 0, anomalies: 0 });
    expect(await Promise.all(records.map((r) => stored(r.id)))).toEqual(before);
    const after = await db.pool.query('SELECT synced_at AS at FROM reporting.payments WHERE id = $1', [
      records[0]?.id,
    ]);
    expect((after.rows[0].at as Date).getTime()).toBeGreaterThan((seen.rows[0].at as Date).getTime());
    expect(await history(records[1]?.id as string)).toEqual(['PENDING']);
  });

  it('never lets an older copy overwrite a newer one, whatever order pages arrive in', async () => {
    const newer = makePayment({ status: 'COMPLETE', updatedAt: at(30) });
    const older = { ...newer, status: 'PENDING' as const, amount: '1', updatedAt: at(10) };
    expect(await loadPage(db.pool, page([newer]))).toMatchObject({ inserted: 1 });
    expect(await loadPage(db.pool, page([older]))).toMatchObject({ stale: 1, updated: 0, anomalies: 0 });
    expect(await stored(newer.id)).toMatchObject({ status: 'COMPLETE', amount: '1500.5' });
    // The older copy still proves the payment went through PENDING first.
    expect(await history(newer.id)).toEqual(['PENDING', 'COMPLETE']);
  });

  it('applies a different copy with the same updatedAt, and a newer one', async () => {
    const first = makePayment({ description: 'first' });
    await loadPage(db.pool, page([first]));
    expect(await loadPage(db.pool, page([{ ...first, description: 'fixed' }]))).toMatchObject({ updated: 1 });
    const later = { ...first, description: 'later', updatedAt: at(99) };
    expect(await loadPage(db.pool, page([later]))).toMatchObject({ updated: 1 });
    expect(await stored(first.id)).toMatchObject({ description: 'later' });
  });

  it('records each status transition once and flags a final status going back', async () => {
    const p = makePayment({ status: 'INIT', updatedAt: at(1) });
    const steps: Payment[] = [
      p,
      { ...p, status: 'PENDING', updatedAt: at(2) },
      { ...p, status: 'PENDING', updatedAt: at(3) },
      { ...p, status: 'COMPLETE', updatedAt: at(4) },
      { ...p, status: 'COMPLETE', updatedAt: at(4) },
    ];
    for (const step of steps) await loadPage(db.pool, page([step]));
    expect(await history(p.id)).toEqual(['INIT', 'PENDING', 'COMPLETE']);
    const warnings: unknown[] = [];
    const log = { warn: (obj: unknown) => warnings.push(obj), info: () => undefined };
    const back = await loadPage(
      db.pool,
      page([{ ...p, status: 'PENDING', updatedAt: at(5) }]),
      log as unknown as Parameters<typeof loadPage>[2],
    );
    expect(back).toMatchObject({ updated: 1, anomalies: 1 });
    expect(warnings).toEqual([expect.objectContaining({ id: p.id, from: 'COMPLETE', to: 'PENDING' })]);
    expect(await history(p.id)).toEqual(['INIT', 'PENDING', 'COMPLETE']);
  });

  it('keeps the latest copy of an id sent twice in one page', async () => {
    const p = makePayment({ status: 'PENDING', updatedAt: at(1) });
    const done = { ...p, status: 'COMPLETE' as const, updatedAt: at(2) };
    expect(await loadPage(db.pool, page([done, p, done]))).toMatchObject({ inserted: 1, anomalies: 0 });
    expect(await stored(p.id)).toMatchObject({ status: 'COMPLETE' });
  });

  it('quarantines both copies of an id sent twice with the same updatedAt and different contents', async () => {
    const a = makePayment({ amount: '100' });
    const b = { ...a, amount: '1500.50' };
    const ab = await loadPage(db.pool, page([a, b, a]));
    expect(ab).toMatchObject({ inserted: 0, rejects: 2 }); // one per distinct copy
    expect(await stored(a.id)).toBeUndefined(); // neither amount is trusted
    const { rows } = await db.pool.query<{ reason: string; raw: { amount: unknown } }>(
      'SELECT reason, raw FROM reporting.sync_rejects WHERE record_id = $1 ORDER BY raw_hash',
      [a.id],
    );
    expect(rows).toHaveLength(2); // one row per distinct copy
    expect(rows[0]?.reason).toMatch(/same updatedAt and different contents \(amount\)/);
  });

  it('stores amounts exactly, however large or precise', async () => {
    const amounts = ['1500.5', '250000000', '1500.50', '0.000001', '-3.10', '12345678901234567890.123456789'];
    const records = amounts.map((amount) => makePayment({ amount }));
    await loadPage(db.pool, page(records));
    const { rows } = await db.pool.query<{ amount: string }>(
      'SELECT amount FROM reporting.payments WHERE id = ANY($1) ORDER BY array_position($1, id)',
      [records.map((r) => r.id)],
    );
    expect(rows.map((r) => r.amount)).toEqual(amounts);
    const sum = await db.pool.query<{ total: string }>(
      'SELECT sum(amount) AS total FROM reporting.payments WHERE id = ANY($1)',
      [records.map((r) => r.id)],
    );
    expect(sum.rows[0]?.total).toBe('12345678901484570888.023457789');
  });

  it('round-trips extra_data exactly, lossless numbers included', async () => {
    const extra = {
      big: new LosslessNumber('12345678901234567890.10'),
      nested: { list: [1, 'two', null, true, { deep: new LosslessNumber('0.1000') }] },
      text: 'é "q" \\ \n 😀',
    };
    const p = makePayment({ extra_data: extra });
    await loadPage(db.pool, page([p]));
    const back = parseExactJson((await stored(p.id)).extra_data as string);
    // JSONB orders keys its own way: compare with keys sorted, numbers as their exact text.
    const canon = (v: unknown): string => JSON.stringify(sortKeys(parseExactJson(toExactJson(v))));
    expect(canon(back)).toBe(canon(extra));
  });

  it('round-trips unicode, quotes, newlines and formula-like text', async () => {
    const texts = [
      '=SUM(A1:A9)',
      '+33 1 23',
      '-2+3',
      '@cmd',
      'say "hi", it\'s',
      'line1\nline2\r\nline3\ttab',
      'back\\slash {braces} NULL',
      'NULL',
      '',
      'مرحبا ✓ 日本 👩🏽‍💻',
    ];
    const records = texts.map((description) => makePayment({ description, reference: description }));
    await loadPage(db.pool, page(records));
    for (const r of records) {
      expect(await stored(r.id)).toMatchObject({ description: r.description, reference: r.reference });
    }
  });
});

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value instanceof LosslessNumber) return `#${value.toString()}`;
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, sortKeys((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

describe('loading transfers', () => {
  it('takes the organisation from the source', async () => {
    const t = makeTransfer({ amount: '25000.75' });
    const result = await loadPage(db.pool, {
      source: 'acme',
      stream: 'transfers',
      organizationId: 'org_acme',
      records: [t],
      rejects: [],
    });
    expect(result).toMatchObject({ inserted: 1 });
    const { rows } = await db.pool.query('SELECT amount, organization_id, source FROM reporting.transfers');
    expect(rows).toEqual([{ amount: '25000.75', organization_id: 'org_acme', source: 'acme' }]);
  });

  it('fills the organisation of a transfer first loaded before it was known', async () => {
    const t = makeTransfer();
    const load = (organizationId: string | null) =>
      loadPage(db.pool, { source: 'early', stream: 'transfers', organizationId, records: [t], rejects: [] });
    await load(null);
    await load('org_early'); // the same copy again: unchanged, but the missing organisation is filled
    const { rows } = await db.pool.query('SELECT organization_id FROM reporting.transfers WHERE id = $1', [
      t.id,
    ]);
    expect(rows).toEqual([{ organization_id: 'org_early' }]);
  });
});
