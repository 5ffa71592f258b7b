/**
 * Finance's daily pack: exactly the local day's records, byte-identical when nothing changed, a new
 * version listing what changed when something did, totals that add up exactly, and no formula in a cell.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { exportDay } from '../../src/reconcile/export-day.js';
import type { Manifest } from '../../src/reconcile/manifest.js';
import { dayWindow, localDayOf } from '../../src/sync/windows.js';
import { csvObjects, exactSum, normaliseDecimal, syncAll, tempExportDir } from '../helpers/export.js';
import { startHarness, type Harness } from '../helpers/sync-harness.js';

const ZONE = 'Africa/Porto-Novo'; // UTC+1 all year: 23:00-24:00 UTC belongs to the next local day
let h: Harness;
let exportDir: string;

beforeAll(async () => {
  exportDir = await tempExportDir();
  h = await startHarness({
    name: 'export',
    sim: { days: 3, perDay: 240 },
    env: { REPORT_TIMEZONE: ZONE, EXPORT_DIR: exportDir, PAGE_SIZE: '100' },
  });
  await syncAll(h);
});

afterAll(async () => {
  await h?.close();
  await rm(exportDir, { recursive: true, force: true });
});

const dayOffset = (days: number) => localDayOf(new Date(h.sim.now().getTime() - days * 86_400_000), ZONE);
const read = (day: string, file: string) => readFile(join(exportDir, day, file), 'utf8');
const manifestOf = async (day: string) => JSON.parse(await read(day, 'manifest.json')) as Manifest;

async function folderDigest(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out[path.slice(dir.length)] = createHash('sha256')
      .update(await readFile(path))
      .digest('hex');
  }
  return out;
}

describe('a day pack holds exactly the local day', () => {
  it.each([1, 2])(
    'day -%i in Africa/Porto-Novo: every record created that local day, in order',
    async (n) => {
      const day = dayOffset(n);
      const result = await exportDay(h.runtime, day);
      const truth = h.sim
        .payments(h.org)
        .filter((p) => localDayOf(new Date(p.createdAt), ZONE) === day)
        .sort((a, b) =>
          a.createdAt === b.createdAt ? (a.id < b.id ? -1 : 1) : a.createdAt < b.createdAt ? -1 : 1,
        );
      const rows = csvObjects(await read(day, `v${result.version}/payments.csv`));
      expect(rows.map((r) => r.id)).toEqual(truth.map((p) => p.id));
      expect(rows.map((r) => r.createdAt)).toEqual(truth.map((p) => p.createdAt));
      // the zone matters: some of the day's records fall on the previous UTC day (23:00-24:00 UTC)
      expect(truth.some((p) => p.createdAt.slice(0, 10) !== day)).toBe(true);
      const transfers = csvObjects(await read(day, `v${result.version}/transfers.csv`));
      const truthTransfers = h.sim
        .transfers(h.org)
        .filter((t) => localDayOf(new Date(t.createdAt), ZONE) === day);
      expect(transfers.map((t) => t.id).sort()).toEqual(truthTransfers.map((t) => t.id).sort());
      const m = await manifestOf(day);
      expect(m).toMatchObject({ day, timeZone: ZONE, version: 1, restatement: null });
      expect(m.files.payments).toMatchObject({ path: 'v1/payments.csv', rows: truth.length });
    },
  );

  it('writes amounts, timestamps and extra_data exactly as the service sent them', async () => {
    const day = dayOffset(1);
    const rows = csvObjects(await read(day, 'v1/payments.csv'));
    const truth = new Map(h.sim.payments(h.org).map((p) => [p.id, p]));
    for (const r of rows) {
      const p = truth.get(r.id)!;
      expect(r.amount).toBe(String(p.amount));
      expect(r.updatedAt).toBe(p.updatedAt);
      expect(JSON.parse(r.extra_data)).toEqual(p.extra_data);
      expect(r.extra_data).not.toMatch(/": |, "/); // compact
    }
  });
});

describe('one instant', () => {
  it('files, summary and manifest agree while records keep landing in the day', async () => {
    // the records files are written on a second connection that imports the export's snapshot: records
    // committed meanwhile must be in none of the pack's parts, or in all of them
    const day = '2024-06-01';
    const { start } = dayWindow(day, ZONE);
    let writing = true;
    let n = 0;
    const writer = (async () => {
      while (writing) {
        n += 1;
        await h.runtime.pool.query(
          `INSERT INTO reporting.payments (id, reference, amount, description, status, transaction_type, phone,
             service_mobile_code, extra_data, created_at, updated_at, organization_id, api_key_id, source)
           VALUES ($1, 'R', 10.5, 'd', 'COMPLETE', 'PAYMENT', NULL, 'MTN_BJ', '{}', $2, $2, 'o', 'k', 's')`,
          [`instant_${n}`, new Date(start.getTime() + n * 1000)],
        );
      }
    })();
    let previous = 0;
    try {
      while (n < 50) await new Promise((r) => setTimeout(r, 5)); // the day already holds records
      for (let i = 0; i < 5; i++) {
        // a day no sync window covers: published only as incomplete
        const result = await exportDay(h.runtime, day, { allowIncomplete: true });
        expect(result.state).toBe('incomplete');
        const dir = join(exportDir, day, `v${result.version}`);
        const m = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8')) as Manifest;
        const csvRows = csvObjects(await readFile(join(dir, 'payments.csv'), 'utf8')).length;
        const summary = csvObjects(await readFile(join(dir, 'summary.csv'), 'utf8')).find(
          (r) => r.level === 'stream_total' && r.stream === 'payments',
        );
        expect([csvRows, m.files.payments.rows, Number(summary?.records)]).toEqual([
          m.totals.payments.records,
          m.totals.payments.records,
          m.totals.payments.records,
        ]);
        // each new version lists exactly the records added since the previous one
        if (m.restatement) expect(m.restatement.added.count).toBe(m.totals.payments.records - previous);
        previous = m.totals.payments.records;
      }
    } finally {
      writing = false;
      await writer;
    }
    expect(n).toBeGreaterThan(60); // records were landing throughout
  });
});

describe('versions', () => {
  it('a second export of an unchanged day is byte-identical and keeps its version', async () => {
    const day = dayOffset(2);
    const before = await folderDigest(join(exportDir, day));
    const again = await exportDay(h.runtime, day);
    expect(again).toMatchObject({ version: 1, unchanged: true, restated: false });
    expect(await folderDigest(join(exportDir, day))).toEqual(before);
  });

  it('two exports of the same day at once equal a single run', async () => {
    const day = dayOffset(3);
    const [a, b] = await Promise.all([exportDay(h.runtime, day), exportDay(h.runtime, day)]);
    expect([a.version, b.version]).toEqual([1, 1]);
    expect([a.unchanged, b.unchanged].sort()).toEqual([false, true]); // one published, the other found it
    const entries = (await readdir(join(exportDir, day))).sort();
    expect(entries).toEqual(['manifest.json', 'v1']);
  });

  it('a moved or emptied EXPORT_DIR gets the next version, never a number the ledger already gave', async () => {
    const day = dayOffset(4); // a day of its own: the other tests count this file's versions
    expect((await exportDay(h.runtime, day)).version).toBe(1);
    const elsewhere = await tempExportDir();
    try {
      const moved = { ...h.runtime, settings: { ...h.runtime.settings, EXPORT_DIR: elsewhere } };
      const published = await exportDay(moved, day);
      expect(published.unchanged).toBe(false);
      expect(published.version).toBe(2);
      expect(await readdir(join(elsewhere, day))).toContain(`v${published.version}`);
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  });

  it('a status change makes the next export a new version listing the change; v1 stays readable', async () => {
    const day = dayOffset(2);
    const v1 = await folderDigest(join(exportDir, day, 'v1'));
    const { rows } = await h.runtime.pool.query(
      `UPDATE reporting.payments SET status = 'FAILED', updated_at = updated_at + interval '1 hour'
        WHERE id = (SELECT id FROM reporting.payments WHERE created_at >= $1 AND status <> 'FAILED'
                     ORDER BY created_at LIMIT 1)
        RETURNING id, (SELECT status FROM reporting.payments p2 WHERE p2.id = payments.id) AS old`,
      [new Date(`${day}T00:00:00+01:00`)],
    );
    const changed = rows[0].id as string;
    const result = await exportDay(h.runtime, day);
    expect(result).toMatchObject({ version: 2, restated: true, unchanged: false });
    const m = await manifestOf(day);
    expect(m.version).toBe(2);
    expect(m.files.payments.path).toBe('v2/payments.csv');
    expect(m.restatement?.previousVersion).toBe(1);
    expect(m.restatement?.changed.records).toEqual([
      { stream: 'payments', id: changed, status: { old: rows[0].old, new: 'FAILED' } },
    ]);
    expect(m.restatement?.added.count).toBe(0);
    expect(await folderDigest(join(exportDir, day, 'v1'))).toEqual(v1);
    const v2 = csvObjects(await read(day, 'v2/payments.csv'));
    expect(v2.find((r) => r.id === changed)?.status).toBe('FAILED');
  });
});

describe('summary and formulas', () => {
  it('summary sums equal the CSV rows summed independently with exact decimals', async () => {
    const day = dayOffset(1);
    const all = csvObjects(await read(day, 'v1/summary.csv'));
    // one 'quarantined' line per stream counts the day's rejects.csv (none on this day)
    expect(all.filter((s) => s.level === 'quarantined').map((s) => [s.stream, s.records])).toEqual([
      ['payments', '0'],
      ['transfers', '0'],
    ]);
    const summary = all.filter((s) => s.level !== 'quarantined');
    const groups = new Map<string, string[]>();
    const add = (key: string, amount: string) => groups.set(key, [...(groups.get(key) ?? []), amount]);
    for (const p of csvObjects(await read(day, 'v1/payments.csv'))) {
      add(`payments|${p.status}|${p.transaction_type}|${p.service_mobile_code}`, p.amount);
      add('payments', p.amount);
      add('total', p.amount);
    }
    for (const t of csvObjects(await read(day, 'v1/transfers.csv'))) {
      add(`transfers|${t.status}|TRANSFER|${t.service_mobile_code}`, t.amount);
      add('transfers', t.amount);
      add('total', t.amount);
    }
    const keyOf = (s: (typeof summary)[number]): string =>
      s.level === 'detail'
        ? `${s.stream}|${s.status}|${s.transaction_type}|${s.service_mobile_code}`
        : s.level === 'stream_total'
          ? s.stream
          : 'total';
    expect(summary.map(keyOf).sort()).toEqual([...groups.keys()].sort());
    for (const s of summary) {
      const amounts = groups.get(keyOf(s)) ?? [];
      expect([s.records, normaliseDecimal(s.amount)]).toEqual([String(amounts.length), exactSum(amounts)]);
    }
    const m = await manifestOf(day);
    expect(normaliseDecimal(m.totals.payments.amount)).toBe(exactSum(groups.get('payments') ?? []));
  });

  it('neutralises formula text and leaves phone numbers as they are', async () => {
    const day = dayOffset(1);
    const payments = csvObjects(await read(day, 'v1/payments.csv'));
    const descriptions = new Set(payments.map((p) => p.description));
    for (const cell of ['=HYPERLINK("http://x")', '+SUM(A1)', '-2+3', '@cmd', '\tTabulation en tête']) {
      if (descriptions.has(cell) || descriptions.has(`'${cell}`)) expect(descriptions).toContain(`'${cell}`);
    }
    const risky = payments.flatMap((p) => Object.values(p)).filter((v) => /^[=+\-@\t\r]/.test(v));
    expect(risky.length).toBeGreaterThan(0);
    for (const v of risky) expect(v).toMatch(/^\+\d{6,15}$/); // only phone numbers start that way
    expect(payments.some((p) => /^\+\d+$/.test(p.phone))).toBe(true);
    const names = csvObjects(await read(day, 'v1/transfers.csv')).map((t) => t.name);
    expect(names.filter((n) => n.includes('=1+1'))).toEqual(names.filter((n) => n === "'=1+1 Test"));
  });
});
