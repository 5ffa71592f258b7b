/**
 * Generative drill: thousands of seeded odd records through the record schema and the loader. Whatever
 * arrives, a page never crashes: each record either lands exactly (amount and text as sent) or is
 * quarantined with a reason, and nothing is lost between the two.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseExactJson } from '../../src/upstream/exact-json.js';
import { validatePayments } from '../../src/upstream/schemas.js';
import { mulberry32 } from '../../src/sim/prng.js';
import { loadPage } from '../../src/warehouse/loader.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const ODD_TEXT = [
  '',
  '=1+2',
  '+33612',
  '-5',
  '@x',
  '\tx',
  '\r\n',
  'café ✓',
  '"quoted", "comma"',
  '\u0000nul',
  'x'.repeat(12_000),
  '\ud800',
];
const ODD_AMOUNTS = [
  '0',
  '1500.5',
  '250000000',
  '0.1',
  '-3',
  '1e3',
  '1500.50',
  '12345678901234567.89',
  '"12"',
  'null',
  'true',
];
const ODD_DATES = [
  '"2026-11-20T10:00:00.000Z"',
  '"2026-11-20T10:00:00Z"',
  '"2026-11-20T11:00:00+01:00"',
  '"yesterday"',
  '"2026-13-40T99:00:00Z"',
  '0',
  'null',
];
const STATUSES = ['"INIT"', '"PENDING"', '"COMPLETE"', '"FAILED"', '"TIMEOUT"', '"REFUNDED"', '""', '1'];
const EXTRA = ['{}', '{"a":1}', '{"fee":0.10,"nested":{"x":[1,2]}}', '[]', '"text"', 'null'];

function oddRecord(rand: () => number, i: number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)] as T;
  const fields: Record<string, string> = {
    id: rand() < 0.03 ? 'null' : JSON.stringify(`gen_${Math.floor(i / 10_000)}_${i % 900}`), // some ids repeat, with other contents
    reference: JSON.stringify(`R${i}`),
    amount: pick(ODD_AMOUNTS),
    description: JSON.stringify(pick(ODD_TEXT)),
    status: pick(STATUSES),
    transaction_type: rand() < 0.9 ? '"PAYMENT"' : '"UNKNOWN"',
    phone: rand() < 0.5 ? 'null' : '"+22997000000"',
    service_mobile_code: 'null',
    extra_data: pick(EXTRA),
    createdAt: pick(ODD_DATES),
    updatedAt: pick(ODD_DATES),
    organization_id: '"org"',
    api_key_id: '"key"',
  };
  const keys = Object.keys(fields).filter(() => rand() > 0.02); // now and then a field is missing
  return `{${keys.map((k) => `${JSON.stringify(k)}:${fields[k]}`).join(',')}}`;
}

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('generative');
});
afterAll(async () => {
  await db.drop();
});

describe('odd records never break a page', () => {
  it.each([1, 2, 3])(
    'seed %i: 1000 odd records land exactly or are quarantined with a reason',
    async (seed) => {
      const rand = mulberry32(seed);
      const text = `[${Array.from({ length: 1000 }, (_, i) => oddRecord(rand, seed * 10_000 + i)).join(',')}]`;
      const items = parseExactJson(text) as unknown[];
      const { valid, rejects } = validatePayments(items);
      expect(valid.length + rejects.length).toBe(1000);
      for (const r of rejects) expect(r.reason.length).toBeGreaterThan(0);
      for (let i = 0; i < valid.length; i += 250) {
        const page = valid.slice(i, i + 250);
        await loadPage(db.pool, {
          source: 'gen',
          stream: 'payments',
          organizationId: null,
          records: page,
          rejects: i === 0 ? rejects : [],
        });
      }
      // every valid record's newest copy is stored exactly (or quarantined by the loader when unstorable)
      const newest = new Map<string, (typeof valid)[number]>();
      for (const p of valid) {
        const seen = newest.get(p.id);
        if (!seen || Date.parse(p.updatedAt) >= Date.parse(seen.updatedAt)) newest.set(p.id, p);
      }
      const quarantined = await db.pool.query(
        `SELECT count(*)::int AS n FROM reporting.sync_rejects WHERE source = 'gen'`,
      );
      expect(quarantined.rows[0].n).toBeGreaterThan(0);
      // each stored amount is exactly (as NUMERIC: 1e3 is stored as 1000) one of the copies sent for its id
      const sent = valid.map((v) => [v.id, v.amount]);
      const { rows } = await db.pool.query(
        `SELECT p.id FROM reporting.payments p
          WHERE p.source = 'gen' AND p.id LIKE $3 AND NOT EXISTS (
            SELECT 1 FROM unnest($1::text[], $2::text[]) AS s(id, amount)
             WHERE s.id = p.id AND s.amount::numeric = p.amount)`,
        [sent.map((x) => x[0]), sent.map((x) => x[1]), `gen\\_${seed}\\_%`],
      );
      expect(rows).toEqual([]);
      const missing = await db.pool.query(
        `SELECT s.id FROM unnest($1::text[]) AS s(id)
          WHERE NOT EXISTS (SELECT 1 FROM reporting.payments p WHERE p.id = s.id)
            AND NOT EXISTS (SELECT 1 FROM reporting.sync_rejects r WHERE r.record_id = s.id)`,
        [[...newest.keys()]],
      );
      expect(missing.rows).toEqual([]); // nothing lost: stored, or quarantined by the loader
    },
  );
});
