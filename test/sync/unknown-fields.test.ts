/**
 * The service grows its records: fields its interface does not list are kept in the record's row
 * (`unknown_fields`, json), exactly as they came (numbers keep their digits, nested values their shape),
 * and move with the record under the loader's forward-only rule.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { LosslessNumber } from '../../src/upstream/exact-json.js';
import { loadPage } from '../../src/warehouse/loader.js';
import { at, makePayment } from '../helpers/records.js';
import { startHarness, syncAll, type Harness } from '../helpers/sync-harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'unknown_fields', sim: { days: 2, perDay: 30 } });
});
afterAll(async () => {
  await h?.close();
});

const PAYMENT_EXTRA = {
  fee_amount: '125.50',
  channel: '"ussd"',
  fees: '{"currency":"XOF","parts":[1,2.50,-0.0],"rule":null,"big":12345678901234567890.123456789}',
  settled: 'true',
  'odd "name"': '[]',
};
const PAYMENT_TEXT =
  '{"fee_amount":125.50,"channel":"ussd","fees":{"currency":"XOF","parts":[1,2.50,-0.0],"rule":null,' +
  '"big":12345678901234567890.123456789},"settled":true,"odd \\"name\\"":[]}';

describe('fields the interface does not list', () => {
  it('are stored with every record over real HTTP, exactly as sent; analysts read them with ->>', async () => {
    h.sim.setSwitches({ paymentExtraFields: PAYMENT_EXTRA, transferExtraFields: { fee: '0.10' } });
    await syncAll(h);
    const pool = h.runtime.pool;
    const { rows: payments } = await pool.query<{ text: string; fee: string; currency: string }>(
      `SELECT unknown_fields::text AS text, unknown_fields->>'fee_amount' AS fee,
              unknown_fields->'fees'->>'currency' AS currency
         FROM reporting.payments`,
    );
    expect(payments.length).toBe(h.sim.payments(h.org).length);
    expect(new Set(payments.map((p) => p.text))).toEqual(new Set([PAYMENT_TEXT]));
    expect(new Set(payments.map((p) => `${p.fee} ${p.currency}`))).toEqual(new Set(['125.50 XOF']));
    const { rows: transfers } = await pool.query<{ text: string }>(
      `SELECT unknown_fields::text AS text FROM reporting.transfers`,
    );
    expect(transfers.length).toBe(h.sim.transfers(h.org).length);
    expect(new Set(transfers.map((t) => t.text))).toEqual(new Set(['{"fee":0.10}']));
    // the known fields are untouched, and nothing was quarantined for the new ones
    const { rows: rejects } = await pool.query(`SELECT reason FROM reporting.sync_rejects`);
    expect(rejects).toEqual([]);
    h.sim.setSwitches({ paymentExtraFields: {}, transferExtraFields: {} });
  }, 60_000);

  it("docs/analysts.md's queries of them run as written and return the values sent", async () => {
    const doc = await readFile(new URL('../../docs/analysts.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('## Fields paysync does not know'));
    const block = /```sql\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    const statements = block
      .split(/;\s*\n/)
      .map((sql) => sql.replace(/^\s*--.*$/gm, '').trim())
      .filter(Boolean);
    expect(statements.length).toBe(2);
    const [values, sums] = await Promise.all(statements.map((sql) => h.runtime.pool.query(sql)));
    expect(values?.rows.length).toBe(20);
    expect(values?.rows.every((r) => r.fee_amount === '125.50' && r.channel === 'ussd')).toBe(true);
    const payments = h.sim.payments(h.org).length;
    expect(sums?.rows.reduce((n, r) => n + Number(r.payments), 0)).toBe(payments);
    expect(sums?.rows.every((r) => r.fees === (Number(r.payments) * 125.5).toFixed(2))).toBe(true);
  });

  it('move only forward with their record: an older copy never replaces them, a newer one does', async () => {
    const pool = h.runtime.pool;
    const id = 'pay_forward_only';
    const base = makePayment({ id });
    const load = (updatedAt: string, unknownFields?: Record<string, unknown>) =>
      loadPage(pool, {
        source: 'default',
        stream: 'payments',
        organizationId: null,
        records: [{ ...base, updatedAt, ...(unknownFields ? { unknownFields } : {}) }],
        rejects: [],
      });
    const stored = async () =>
      (
        await pool.query<{ text: string | null }>(
          `SELECT unknown_fields::text AS text FROM reporting.payments WHERE id = $1`,
          [id],
        )
      ).rows[0]?.text;

    expect(await load(at(10), { fee: new LosslessNumber('1.50') })).toMatchObject({ inserted: 1 });
    expect(await stored()).toBe('{"fee":1.50}');
    expect(await load(at(5), { fee: 2 })).toMatchObject({ stale: 1 });
    expect(await stored()).toBe('{"fee":1.50}');
    expect(await load(at(10), { fee: new LosslessNumber('1.50') })).toMatchObject({ unchanged: 1 });
    expect(await load(at(10), { fee: new LosslessNumber('1.5') })).toMatchObject({ updated: 1 }); // same time, other text
    expect(await stored()).toBe('{"fee":1.5}');
    expect(await load(at(20))).toMatchObject({ updated: 1 });
    expect(await stored()).toBeNull();
  });
});
