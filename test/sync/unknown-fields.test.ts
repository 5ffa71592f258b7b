/**
 * The service grows its records: fields its interface does not list are kept in the record's row
 * (`unknown_fields`, json), exactly as they came (numbers keep their digits, nested values their shape),
 * move with the record under the loader's forward-only rule, are sighted once per stream and field
 * (reporting.field_sightings, the view reporting.unknown_fields_seen) and stay out of the packs. Known
 * fields that stop arriving or change type keep their records quarantined, and are sighted too.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { exportDay } from '../../src/reconcile/export-day.js';
import { localDayOf } from '../../src/sync/windows.js';
import { tempExportDir } from '../helpers/export.js';
import { loadPage } from '../../src/warehouse/loader.js';
import { at, makePayment, makeTransfer } from '../helpers/records.js';
import { parseExactJson } from '../../src/upstream/exact-json.js';
import { validatePayments, validateTransfers } from '../../src/upstream/schemas.js';
import { startHarness, syncAll, type Harness } from '../helpers/sync-harness.js';

let h: Harness;
let exportDir: string;
beforeAll(async () => {
  exportDir = await tempExportDir();
  h = await startHarness({
    name: 'unknown_fields',
    sim: { days: 2, perDay: 30 },
    env: { EXPORT_DIR: exportDir },
  });
});
afterAll(async () => {
  await h?.close();
  await rm(exportDir, { recursive: true, force: true });
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
    // each new field is sighted once per stream: on how many stored records, with one value as stored
    const { rows: sightings } = await pool.query(
      `SELECT stream, field, change, records::int AS records, example, first_source, acknowledged_at
         FROM reporting.field_sightings ORDER BY stream, field`,
    );
    const sighting = (stream: string, field: string, example: string) => ({
      stream,
      field,
      change: 'added',
      records: stream === 'payments' ? payments.length : transfers.length,
      example,
      first_source: 'default',
      acknowledged_at: null,
    });
    expect(sightings).toEqual([
      sighting('payments', 'channel', '"ussd"'),
      sighting('payments', 'fee_amount', '125.50'),
      sighting('payments', 'fees', PAYMENT_EXTRA.fees),
      sighting('payments', 'odd "name"', '[]'),
      sighting('payments', 'settled', 'true'),
      sighting('transfers', 'fee', '0.10'),
    ]);
    await syncAll(h); // read again: the same records, nothing announced twice or counted twice
    const { rows: again } = await pool.query(
      `SELECT stream, field, change, records::int AS records, example, first_source, acknowledged_at
         FROM reporting.field_sightings ORDER BY stream, field`,
    );
    expect(again).toEqual(sightings);

    // the packs' files and columns are finance's contract: the new fields are not in them
    const day = localDayOf(new Date(h.sim.now().getTime() - 86_400_000), 'UTC');
    const { dir } = await exportDay(h.runtime, day, { allowIncomplete: true, now: h.sim.now() });
    const csv = await readFile(join(dir, 'payments.csv'), 'utf8');
    expect(csv.split('\r\n')[0]).toBe(
      'id,reference,amount,description,status,transaction_type,phone,service_mobile_code,extra_data,createdAt,updatedAt,organization_id,api_key_id',
    );
    expect((await readFile(join(dir, 'transfers.csv'), 'utf8')).split('\r\n')[0]).toBe(
      'id,reference,amount,name,phone,service_mobile_code,status,createdAt,updatedAt',
    );
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(join(dir, 'pack.xlsx'));
    const cells: string[] = [];
    wb.eachSheet((sheet) =>
      sheet.eachRow((row) => row.eachCell((cell) => cells.push(JSON.stringify(cell.value)))),
    );
    for (const text of [csv, cells.join('\n')]) {
      expect(text.length).toBeGreaterThan(1000);
      expect(text).not.toContain('fee_amount');
      expect(text).not.toContain('ussd');
    }
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
    expect(statements.length).toBe(3);
    const [seen, values, sums] = await Promise.all(statements.map((sql) => h.runtime.pool.query(sql)));
    const payments = h.sim.payments(h.org).length;
    expect(seen?.rows.map((r) => [r.stream, r.field, Number(r.records), r.example, r.read_with])).toEqual([
      ['payments', 'channel', payments, '"ussd"', "unknown_fields->>'channel'"],
      ['payments', 'fee_amount', payments, '125.50', "unknown_fields->>'fee_amount'"],
      ['payments', 'fees', payments, PAYMENT_EXTRA.fees, "unknown_fields->>'fees'"],
      ['payments', 'odd "name"', payments, '[]', `unknown_fields->>'odd "name"'`],
      ['payments', 'settled', payments, 'true', "unknown_fields->>'settled'"],
      ['transfers', 'fee', h.sim.transfers(h.org).length, '0.10', "unknown_fields->>'fee'"],
    ]);
    expect(seen?.rows.every((r) => r.first_seen_at <= r.last_seen_at)).toBe(true);
    expect(values?.rows.length).toBe(20);
    expect(values?.rows.every((r) => r.fee_amount === '125.50' && r.channel === 'ussd')).toBe(true);
    expect(sums?.rows.reduce((n, r) => n + Number(r.payments), 0)).toBe(payments);
    expect(sums?.rows.every((r) => r.fees === (Number(r.payments) * 125.5).toFixed(2))).toBe(true);
  });

  it('move only forward with their record: an older copy never replaces them, a newer one does', async () => {
    const pool = h.runtime.pool;
    const id = 'pay_forward_only';
    const base = makePayment({ id });
    const load = (updatedAt: string, unknownFields?: string) =>
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

    const carrying = async () =>
      (
        await pool.query<{ records: number; example: string }>(
          `SELECT records::int AS records, example FROM reporting.field_sightings
            WHERE stream = 'payments' AND field = 'fee'`,
        )
      ).rows[0];

    expect(await load(at(10), '{"fee":1.50}')).toMatchObject({ inserted: 1 });
    expect(await stored()).toBe('{"fee":1.50}');
    expect(await carrying()).toEqual({ records: 1, example: '1.50' });
    expect(await load(at(5), '{"fee":2}')).toMatchObject({ stale: 1 });
    expect(await stored()).toBe('{"fee":1.50}');
    expect(await load(at(10), '{"fee":1.50}')).toMatchObject({ unchanged: 1 });
    expect(await load(at(10), '{"fee":1.5}')).toMatchObject({ updated: 1 }); // same time, other text
    expect(await stored()).toBe('{"fee":1.5}');
    expect(await carrying()).toEqual({ records: 1, example: '1.50' });
    expect(await load(at(20))).toMatchObject({ updated: 1 });
    expect(await stored()).toBeNull();
    expect(await carrying()).toEqual({ records: 0, example: '1.50' }); // no stored record carries it now
  });
  it('are kept record by record on a page whose records name them in different orders, or not at all', () => {
    const raw = (extra: Record<string, unknown>, first = false) => {
      const { amount: _amount, ...known } = makePayment();
      return first ? { ...extra, ...known, amount: 1500.5 } : { ...known, amount: 1500.5, ...extra };
    };
    const items = parseExactJson(
      JSON.stringify([
        raw({ fee: 1, channel: 'ussd' }),
        raw({ channel: 'ussd', fee: 1 }),
        raw({ fee: 1, channel: 'ussd' }, true),
        raw({}),
        raw({ fee: 1, note: 'a "b" \\ c' }),
        raw({ fee: 1, channel: 'ussd' }),
      ]),
    ) as unknown[];
    const { valid, rejects } = validatePayments(items);
    expect(rejects).toEqual([]);
    expect(valid.map((p) => p.unknownFields)).toEqual([
      '{"fee":1,"channel":"ussd"}',
      '{"channel":"ussd","fee":1}',
      '{"fee":1,"channel":"ussd"}',
      undefined,
      '{"fee":1,"note":"a \\"b\\" \\\\ c"}',
      '{"fee":1,"channel":"ussd"}',
    ]);
    // a transfer is judged against the transfer's fields
    const transfer = parseExactJson(
      JSON.stringify({ ...makeTransfer(), amount: 25000, fee: 1, channel: 'ussd' }),
    ) as unknown;
    expect(validateTransfers([transfer]).valid[0]?.unknownFields).toBe('{"fee":1,"channel":"ussd"}');
  });

  it('are stored exactly on a page where only some records carry them', async () => {
    const pool = h.runtime.pool;
    const texts = [
      '{"note":"a \\"b\\" \\\\ c {x,y} NULL"}',
      undefined,
      '{"fee":1.50,"n":[1,{"k":null}]}',
      undefined,
    ];
    const records = texts.map((unknownFields, i) =>
      makePayment({ id: `pay_mixed_${i}`, ...(unknownFields ? { unknownFields } : {}) }),
    );
    expect(
      await loadPage(pool, {
        source: 'default',
        stream: 'payments',
        organizationId: null,
        records,
        rejects: [],
      }),
    ).toMatchObject({ inserted: 4 });
    const { rows } = await pool.query<{ id: string; text: string | null }>(
      `SELECT id, unknown_fields::text AS text FROM reporting.payments WHERE id LIKE 'pay_mixed_%' ORDER BY id`,
    );
    expect(rows.map((r) => r.text)).toEqual(texts.map((t) => t ?? null));
  });
});

describe('known fields that stop arriving or change type', () => {
  it('keep their records quarantined with the reason, and are announced once each, with a count of distinct records', async () => {
    const pool = h.runtime.pool;
    h.sim.setSwitches({
      fieldChanges: [
        { stream: 'payments', field: 'phone', to: 'missing', rate: 0.25 },
        { stream: 'transfers', field: 'amount', to: 'string', rate: 1 },
      ],
    });
    await syncAll(h);
    await syncAll(h); // read again: the same quarantined copies, not counted twice
    const { rows } = await pool.query(
      `SELECT stream, field, change, records::int AS records, example, detail FROM reporting.field_sightings
        WHERE change <> 'added' ORDER BY stream`,
    );
    const quarantined = async (stream: string, reason: string) =>
      Number(
        (
          await pool.query(
            `SELECT count(DISTINCT record_id) AS n FROM reporting.sync_rejects
              WHERE stream = $1 AND resolved_at IS NULL AND reason LIKE $2`,
            [stream, `${reason}%`],
          )
        ).rows[0].n,
      );
    const phones = await quarantined('payments', 'phone: ');
    const amounts = await quarantined('transfers', 'amount: ');
    expect(phones).toBeGreaterThan(0);
    expect(amounts).toBe(h.sim.transfers(h.org).length);
    expect(rows).toEqual([
      {
        stream: 'payments',
        field: 'phone',
        change: 'missing',
        records: phones,
        example: null,
        detail: 'expected string or null, received nothing',
      },
      {
        stream: 'transfers',
        field: 'amount',
        change: 'retyped',
        records: amounts,
        example: expect.stringMatching(/^"[0-9.]+"$/),
        detail: 'expected number, received string',
      },
    ]);
    h.sim.setSwitches({ fieldChanges: [] });
  }, 60_000);
});
