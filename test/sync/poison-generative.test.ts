/**
 * Generative (fast-check): pages that mix valid records with random poison — every kind that, unchecked,
 * fails a whole page (huge or over-precise amounts, impossible years and offsets, ids past the index limit,
 * duplicate keys, deep extra_data, NUL, lone surrogates, same-id copies that disagree) — are read as the
 * client reads them (parseExactJson), validated and loaded. Whatever the mix: every valid record lands
 * exactly, every poison record is quarantined with a reason, and the page never fails.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { parseExactJson } from '../../src/upstream/exact-json.js';
import { validatePayments } from '../../src/upstream/schemas.js';
import { loadPage } from '../../src/warehouse/loader.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('poison_gen');
});
afterAll(async () => {
  await db.drop();
});

type Fields = Record<string, string>; // field name → JSON text of its value

function validFields(id: string, amount: string, minute: number): Fields {
  const at = new Date(Date.UTC(2026, 0, 1, 0, minute)).toISOString();
  return {
    id: JSON.stringify(id),
    reference: JSON.stringify(`R-${id}`),
    amount,
    description: JSON.stringify(`payment ${id}`),
    status: '"COMPLETE"',
    transaction_type: '"PAYMENT"',
    phone: 'null',
    service_mobile_code: 'null',
    extra_data: '{"fee":0.10}',
    createdAt: JSON.stringify(at),
    updatedAt: JSON.stringify(at),
    organization_id: '"org"',
    api_key_id: '"key"',
  };
}

const text = (f: Fields, extra = ''): string =>
  `{${Object.entries(f)
    .map(([k, v]) => `${JSON.stringify(k)}:${v}`)
    .join(',')}${extra}}`;

/** Each poison: how it changes a valid record's text. */
const POISONS: Record<string, (f: Fields) => string> = {
  overflow: (f) => text({ ...f, amount: '1e200000' }),
  scale: (f) => text({ ...f, amount: `0.${'3'.repeat(45)}` }),
  yearZero: (f) => text({ ...f, createdAt: '"0000-01-01T00:00:00Z"' }),
  offset: (f) => text({ ...f, updatedAt: '"2026-01-01T10:00:00+16:00"' }),
  longId: (f) => text({ ...f, id: JSON.stringify(`${JSON.parse(f.id as string)}${'x'.repeat(9_000)}`) }),
  longReference: (f) => text({ ...f, reference: JSON.stringify('r'.repeat(3_000)) }),
  duplicateKey: (f) => text(f, ',"amount":99'),
  duplicateLossless: (f) => text(f, ',"amount":99.10'),
  deep: (f) => text({ ...f, extra_data: `${'{"a":'.repeat(3_000)}1${'}'.repeat(3_000)}` }),
  nul: (f) => text({ ...f, description: '"a\\u0000b"' }),
  surrogate: (f) => text({ ...f, description: '"a\\ud800b"' }),
  nulKey: (f) => text({ ...f, extra_data: '{"k\\u0000":1}' }),
};

const AMOUNTS = ['1500.5', '250000000', '1500.50', '0.000001', '12345678901234567890.12', '-3.10', '7'];

const item = fc.record({
  poison: fc.option(fc.constantFrom(...Object.keys(POISONS)), { freq: 2 }),
  amount: fc.constantFrom(...AMOUNTS),
  minute: fc.integer({ min: 0, max: 100_000 }),
});

let run = 0;

describe('pages mixing valid records with random poison', () => {
  it('land every valid record exactly and quarantine every poison with its reason', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(item, { minLength: 1, maxLength: 30 }), fc.boolean(), async (items, twin) => {
        run += 1;
        const records = items.map((it, i) => {
          const id = `g${run}_${i}`;
          const fields = validFields(id, it.amount, it.minute);
          return {
            id,
            amount: it.amount,
            poison: it.poison,
            json: it.poison ? POISONS[it.poison]!(fields) : text(fields),
          };
        });
        // now and then a valid record comes twice with the same updatedAt and another amount: both quarantined
        const twinOf = twin ? records.find((r) => r.poison === null) : undefined;
        const extra = twinOf ? [twinOf.json.replace(/"amount":[^,]+/, '"amount":424242')] : [];
        const body = `{"data":[${[...records.map((r) => r.json), ...extra].join(',')}],"total":${records.length + extra.length}}`;
        const page = (parseExactJson(body) as { data: unknown[] }).data;

        const { valid, rejects } = validatePayments(page);
        const result = await loadPage(db.pool, {
          source: 'gen',
          stream: 'payments',
          organizationId: null,
          records: valid,
          rejects,
        });

        const good = records.filter((r) => r.poison === null && r !== twinOf);
        const { rows } = await db.pool.query<{ id: string; amount: string }>(
          'SELECT id, amount::text AS amount FROM reporting.payments WHERE id = ANY($1) ORDER BY id',
          [records.map((r) => r.id)],
        );
        expect(rows).toEqual(
          good.map((r) => ({ id: r.id, amount: r.amount })).sort((a, b) => (a.id < b.id ? -1 : 1)),
        );
        const quarantined = await db.pool.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM reporting.sync_rejects
            WHERE reason ~ '\\S' AND (record_id = ANY($1)
              OR (record_id IS NULL AND coalesce(raw::text, raw_text) LIKE ANY($2)))`,
          // an id too long for the index is kept in the raw copy only
          [records.map((r) => r.id), records.map((r) => `%"${r.id}xxxx%`)],
        );
        const poisoned = records.filter((r) => r.poison !== null).length + (twinOf ? 2 : 0);
        expect(quarantined.rows[0]?.n).toBe(poisoned);
        expect(result.rejects).toBe(poisoned);
      }),
      { numRuns: 60, seed: 1311 },
    );
  });
});
