/**
 * Records that, left to PostgreSQL, fail their whole page on every retry. Each becomes a reject with a
 * reason a person understands, and its neighbours land: the record checks catch what they know, and the backstop
 * (isolate.ts) isolates whatever PostgreSQL still refuses, quarantining it with PostgreSQL's own message.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseExactJson } from '../../src/upstream/exact-json.js';
import { toListPage } from '../../src/upstream/list-page.js';
import { validatePayments, type Payment } from '../../src/upstream/schemas.js';
import { loadPage } from '../../src/warehouse/loader.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makePayment } from '../helpers/records.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('poison_records');
});
afterAll(async () => {
  await db.drop();
});

const page = (records: Payment[], rejects: Parameters<typeof loadPage>[1]['rejects'] = []) => ({
  source: 'poison',
  stream: 'payments' as const,
  organizationId: null,
  records,
  rejects,
});

async function storedIds(ids: string[]): Promise<string[]> {
  const { rows } = await db.pool.query<{ id: string }>(
    'SELECT id FROM reporting.payments WHERE id = ANY($1) ORDER BY id',
    [ids],
  );
  return rows.map((r) => r.id);
}

async function rejectOf(id: string) {
  const { rows } = await db.pool.query(
    `SELECT reason, raw, raw_text, raw_hash, raw_bytes, raw_truncated, times_seen
       FROM reporting.sync_rejects WHERE record_id = $1`,
    [id],
  );
  return rows;
}

describe('the backstop', () => {
  it('isolates records PostgreSQL refuses, quarantines them with its message, and lands the rest', async () => {
    const good = Array.from({ length: 9 }, () => makePayment());
    // handed to the loader directly, past the record checks, as a check we have not thought of would be
    const overflow = makePayment({ amount: '1e200000' });
    const yearZero = makePayment({ createdAt: '0000-01-01T00:00:00Z' });
    const result = await loadPage(db.pool, page([...good.slice(0, 4), overflow, ...good.slice(4), yearZero]));
    expect(result).toMatchObject({ inserted: 9, rejects: 2 });
    expect(await storedIds(good.map((g) => g.id))).toEqual(good.map((g) => g.id).sort());
    expect((await rejectOf(overflow.id))[0].reason).toMatch(
      /PostgreSQL refused it: .*overflow.*\(SQLSTATE 22003\)/,
    );
    expect((await rejectOf(yearZero.id))[0].reason).toMatch(/PostgreSQL refused it: .*\(SQLSTATE 22008\)/);
  });
});

describe('checks before the statement', () => {
  const record = (amountJson: string, id: string) =>
    JSON.stringify(makePayment({ id })).replace(/"amount":"[^"]*"/, `"amount":${amountJson}`);

  it.each([
    ['canonical', '1,"amount":250'],
    ['non-canonical', '1500.50,"amount":250'],
  ])(
    'a duplicate key on a %s page rejects the record, naming the key, and keeps its neighbours',
    (_, dup) => {
      const text = `[${record('100', 'dup_ok_1')},${record(dup, 'dup_bad')},${record('1500.5', 'dup_ok_2')}]`;
      const { valid, rejects } = validatePayments(parseExactJson(text) as unknown[]);
      expect(valid.map((v) => [v.id, v.amount])).toEqual([
        ['dup_ok_1', '100'],
        ['dup_ok_2', '1500.5'],
      ]);
      expect(rejects).toHaveLength(1);
      expect(rejects[0]?.reason).toMatch(/^duplicate key "amount"/);
    },
  );

  it('a page wrapper naming `data` twice is a protocol problem, not a silently dropped list', () => {
    const body = parseExactJson('{"data":[{"id":"a"}],"total":2,"data":[{"id":"b"}]}');
    const page = toListPage(body, { page: 0, size: 10 });
    expect(page).toEqual({ ok: false, detail: 'the page wrapper names "data" twice' });
  });

  it.each([
    ['an amount of 1e200000', { amount: '1e200000' }, /out of range/],
    ['an amount with 40 decimals', { amount: `0.${'1'.repeat(40)}` }, /more than 20 decimal places/],
    ['year 0000', { createdAt: '0000-01-01T00:00:00Z' }, /year 0000 is outside 1970-9999/],
    ['an offset of +16:00', { updatedAt: '2026-01-01T00:00:00+16:00' }, /offset \+16:00 is beyond/],
    ['a 9,000-character id', { id: 'x'.repeat(9_000) }, /id is 9000 bytes long \(at most 512/],
    ['a 9,000-character reference', { reference: 'r'.repeat(9_000) }, /reference is 9000 bytes long/],
    ['a NUL', { description: 'a\u0000b' }, /NUL character \(at description\)/],
    ['a lone surrogate', { description: 'a\ud800b' }, /unpaired UTF-16 surrogate \(at description\)/],
  ])('%s is a reject with its reason', (_, fields, reason) => {
    const raw = JSON.parse(JSON.stringify({ ...makePayment(), ...fields, amount: 1 }));
    if ('amount' in fields) raw.amount = parseExactJson(String(fields.amount));
    const { valid, rejects } = validatePayments([raw]);
    expect(valid).toEqual([]);
    expect(rejects[0]?.reason).toMatch(reason);
  });

  it('a record nested 5,000 levels deep is a reject kept raw, not "[object Object]"', async () => {
    const deep = `${'{"a":'.repeat(5_000)}1${'}'.repeat(5_000)}`;
    const text = `[${JSON.stringify(makePayment({ id: 'deep_1' })).replace(/"extra_data":\{[^}]*\}/, `"extra_data":${deep}`)}]`;
    const { valid, rejects } = validatePayments(parseExactJson(text) as unknown[]);
    expect(valid).toEqual([]);
    expect(rejects[0]?.reason).toMatch(/nested more than 32 levels deep/);
    await loadPage(db.pool, page([], rejects));
    const [row] = await rejectOf('deep_1');
    expect(row.raw).toBeNull();
    expect(row.raw_text).toContain(deep);
  });

  it('the same bad record twice on a page is one reject; a huge one keeps its start, size and hash', async () => {
    const bad = { raw: { id: 'twice', amount: 'x' }, reason: 'amount: Invalid input', id: 'twice' };
    await loadPage(db.pool, page([], [bad, { ...bad }]));
    expect(await rejectOf('twice')).toEqual([expect.objectContaining({ times_seen: 1 })]);

    const huge = { id: 'huge', description: 'd'.repeat(5_000_000) };
    const text = JSON.stringify(huge);
    await loadPage(db.pool, page([], [{ raw: huge, reason: 'description: Too big', id: 'huge' }]));
    const [row] = await rejectOf('huge');
    expect(row.raw).toBeNull();
    expect(row.raw_truncated).toBe(true);
    expect(row.raw_text).toBe(text.slice(0, 64 * 1024));
    expect(Number(row.raw_bytes)).toBe(Buffer.byteLength(text));
    expect(row.raw_hash).toBe(createHash('sha256').update(text).digest('hex'));
  });
});
