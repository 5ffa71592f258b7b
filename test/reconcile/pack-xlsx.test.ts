/**
 * pack.xlsx, read back with exceljs's own reader and compared cell by cell with the warehouse, as a
 * finance reader meets it: it opens on the summary (settled money under each stream's total, quarantined
 * records counted), prints landscape one page wide with the header row on every page; phones and free
 * text are text cells holding exactly the service's text (formula-looking text, a carriage return and
 * the format's own escape syntax included), amounts are exact in one look per column (numbers at their
 * own scale, or all text when one of them is beyond a spreadsheet number), times are date-time cells
 * equal to the millisecond to the wall clock in REPORT_TIMEZONE with the exact UTC text beside them, and
 * the same content written twice, seconds apart, gives the same bytes.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import ExcelJS from 'exceljs';
import { DateTime } from 'luxon';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { insertSyntheticDay } from '../../bench/export-fixture.js';
import { writeRejects } from '../../src/reconcile/pack-rejects.js';
import { writePackWorkbook, type WorkbookFile } from '../../src/reconcile/pack-xlsx.js';
import { FIXED_DOS_DATE } from '../../src/reconcile/xlsx-zip.js';
import { dayWindow } from '../../src/sync/windows.js';
import { loadPage } from '../../src/warehouse/loader.js';
import { parseCsv } from '../helpers/export.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makePayment, makeTransfer } from '../helpers/records.js';

const ZONE = 'Africa/Porto-Novo'; // UTC+1
const DAY = '2024-03-10';
const window = dayWindow(DAY, ZONE);
const RANGE: [Date, Date] = [window.start, window.end];

const TEXTS = [
  '=1+1',
  ' =1+1',
  '  +SUM(A1)',
  '@cmd',
  '-5',
  "'already quoted",
  'crédit à Dakar — 日本語 💸 ü',
  ' leading and trailing ',
  'line 1\nline 2',
  'a,b "quoted"',
  '00123', // leading zeros: text, not the number 123
  '1e5',
  'TRUE',
  '2024-03-10', // looks like a date: stays text
  '_x0041_', // the OOXML escape syntax: must not turn into "A"
  'first line\r\nsecond line', // a carriage return: written exactly (the format's _x000D_)
  'bare\rreturn _x000D_ literal',
];
// the day's payment amounts: two are beyond a spreadsheet number, so the whole column is exact text
const AMOUNTS = [
  '3316506243.30',
  '1500',
  '0.01',
  '-250.75',
  '999999999999.99', // 14 significant digits
  '12345678901234567890.123456789', // 29 significant digits
  '1234567890123456.5', // 17
];

let db: TestDatabase;
let dir: string;

/** Minutes after 09:00 UTC on the day, with milliseconds. */
const atMs = (minutes: number, milli: number) =>
  new Date(Date.parse(`${DAY}T09:00:00.000Z`) + minutes * 60_000 + milli).toISOString();

beforeAll(async () => {
  db = await createTestDatabase('pack_xlsx');
  dir = await mkdtemp(join(tmpdir(), 'paysync-pack-xlsx-'));
  const payments = TEXTS.map((text, i) =>
    makePayment({
      id: `p${String(i).padStart(2, '0')}`,
      reference: i % 3 === 0 ? text : `REF-${i}`,
      description: text,
      amount: AMOUNTS[i % AMOUNTS.length]!,
      phone: i % 2 ? '+22997123456' : '+2250712345678',
      extra_data: { note: text, n: i, big: 1500.5 },
      createdAt: atMs(i * 7, i * 37 + 1),
      updatedAt: atMs(i * 7 + 1, 999),
    }),
  );
  // the day's edges in REPORT_TIMEZONE: 23:00 UTC the evening before is in, 23:00 UTC on the day is out
  payments.push(makePayment({ id: 'p_first', createdAt: '2024-03-09T23:00:00.000Z', amount: '1' }));
  payments.push(makePayment({ id: 'p_next_day', createdAt: '2024-03-10T23:00:00.000Z', amount: '2' }));
  await loadPage(db.pool, {
    source: 's',
    stream: 'payments',
    organizationId: null,
    records: payments,
    rejects: [],
  });
  const transfers = ['Aïssatou Ndiaye', '=HYPERLINK("http://x")', '李小龙'].map((name, i) =>
    makeTransfer({ id: `t${i}`, name, amount: ['1000.5', '2000.25', '3000'][i]!, createdAt: atMs(i, 5) }),
  );
  await loadPage(db.pool, {
    source: 's',
    stream: 'transfers',
    organizationId: 'o',
    records: transfers,
    rejects: [],
  });
  const reject = (raw: unknown, rawText: string | null, hash: string) =>
    db.pool.query(
      `INSERT INTO reporting.sync_rejects (source, stream, record_id, raw, raw_text, raw_hash, reason, first_seen_at)
       VALUES ('s', 'payments', $1, $2, $3, $4, 'amount: not a decimal', '2024-03-10T10:00:00.250Z')`,
      [(raw as { id?: string } | null)?.id ?? null, raw === null ? null : JSON.stringify(raw), rawText, hash],
    );
  await reject(
    { id: 'bad_1', reference: '=cmd', amount: 'x', createdAt: '2024-03-10T12:00:00.000Z' },
    null,
    'h1',
  );
  await reject(null, '{"id":"bad_2", "createdAt": "2024-03-10T13:00:00Z", broken', 'h2');
  await reject({ id: 'bad_other_day', createdAt: '2024-03-12T12:00:00.000Z' }, null, 'h3');
  await reject({ id: 'bad_date', createdAt: '2024-03-10T99:99' }, null, 'h4');
  await reject(['not', 'an', 'object'], null, 'h5');
});

afterAll(async () => {
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

const MANIFEST = {
  day: DAY,
  timeZone: ZONE,
  version: 3,
  generatedAt: '2024-03-11T02:00:00.000Z',
  state: 'final',
  stateReason: 'every record is in a final state',
  files: { payments: { path: 'payments.csv', rows: 16, bytes: 1, sha256: 'abc' } },
  totals: { payments: { records: 16, amount: '3316507740.31' }, transfers: { records: 3, amount: '6001.5' } },
  reconcile: null,
  restatement: {
    previousVersion: 2,
    added: { count: 1, records: [{ stream: 'payments', id: 'p01', status: 'COMPLETE', amount: '1500' }] },
    removed: { count: 0, records: [] },
    changed: {
      count: 1,
      records: [{ stream: 'payments', id: 'p02', status: { old: 'PENDING', new: 'COMPLETE' } }],
    },
    truncated: false,
  },
};

/** The workbook, and rejects.csv written in the same snapshot (the two must list the same records). */
async function write(
  sub: string,
  maxRowsPerSheet?: number,
): Promise<{ file: WorkbookFile; path: string; rejectsCsv: string }> {
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    const target = await mkdtemp(join(dir, `${sub}-`));
    await writeRejects(client, RANGE, DAY, target);
    const file = await writePackWorkbook(client, {
      range: RANGE,
      day: DAY,
      zone: ZONE,
      dir: target,
      manifest: MANIFEST,
      maxRowsPerSheet,
    });
    await client.query('COMMIT');
    return {
      file,
      path: join(target, 'pack.xlsx'),
      rejectsCsv: await readFile(join(target, 'rejects.csv'), 'utf8'),
    };
  } finally {
    client.release();
  }
}

async function readWorkbook(path: string): Promise<ExcelJS.Workbook> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(path);
  return wb;
}

/** The wall clock of an instant in ZONE, as a Date whose UTC fields are that wall clock (luxon, not SQL). */
function wallClock(iso: string): number {
  const local = DateTime.fromISO(iso, { zone: ZONE }).toFormat("yyyy-MM-dd'T'HH:mm:ss.SSS");
  return Date.parse(`${local}Z`);
}

/**
 * A cell's value as a spreadsheet application reads it: text as one string (exceljs reads some inline
 * strings as rich text) with the format's `_xHHHH_` escapes decoded (ECMA-376's ST_Xstring: Excel and
 * LibreOffice decode them in inline strings; exceljs's reader leaves them as written there).
 */
function valueOf(cell: ExcelJS.Cell): unknown {
  const v = cell.value as unknown;
  const decode = (text: string) =>
    text.replace(/_x([0-9A-Fa-f]{4})_/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
  if (v !== null && typeof v === 'object' && 'richText' in v) {
    return decode((v as { richText: Array<{ text: string }> }).richText.map((r) => r.text).join(''));
  }
  return typeof v === 'string' ? decode(v) : v;
}
const highlighted = (cell: ExcelJS.Cell) => cell.fill?.type === 'pattern' && cell.fill.pattern === 'solid';
const TEXT_TYPES = [ExcelJS.ValueType.String, ExcelJS.ValueType.RichText];

const LOCAL_HEADER = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const headers = (ws: ExcelJS.Worksheet) => (ws.getRow(1).values as unknown[]).slice(1);

describe('pack.xlsx read back with exceljs', () => {
  let wb: ExcelJS.Workbook;
  let file: WorkbookFile;
  let rejectsCsv: string;

  beforeAll(async () => {
    const written = await write('main');
    file = written.file;
    rejectsCsv = written.rejectsCsv;
    wb = await readWorkbook(written.path);
  });

  it('opens on the summary: summary, payments, transfers, rejects, about, with their row counts', () => {
    expect(wb.worksheets.map((w) => w.name)).toEqual([
      'summary',
      'payments',
      'transfers',
      'rejects',
      'about',
    ]);
    expect(wb.views[0]?.activeTab ?? 0).toBe(0);
    expect(file.sheets).toMatchObject({ payments: 18, transfers: 3, rejects: 2 });
    expect(file.rows).toBe(21);
    expect(file.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('every sheet prints landscape, one page wide, header row repeated, narrow margins', () => {
    for (const ws of wb.worksheets) {
      expect(ws.pageSetup).toMatchObject({
        orientation: 'landscape',
        fitToPage: true,
        fitToWidth: 1,
        fitToHeight: 0,
      });
      expect(ws.pageSetup.margins).toMatchObject({ left: 0.4, right: 0.4, top: 0.6, bottom: 0.6 });
      if (ws.name !== 'about') expect(ws.pageSetup.printTitlesRow).toBe('1:1');
    }
  });

  it('payments: every cell typed and equal to the warehouse', async () => {
    const { rows } = await db.pool.query(
      `SELECT id, reference, amount::text AS amount, description, status, transaction_type, phone,
              service_mobile_code, extra_data::text AS extra, created_at, updated_at, organization_id, api_key_id
         FROM reporting.payments WHERE created_at >= $1 AND created_at < $2
        ORDER BY created_at, id COLLATE "C"`,
      RANGE,
    );
    expect(rows.length).toBe(18);
    const ws = wb.getWorksheet('payments')!;
    expect(headers(ws)).toEqual([
      'id',
      'reference',
      'amount',
      'description',
      'status',
      'transaction_type',
      'phone',
      'service_mobile_code',
      'extra_data',
      `createdAt (${ZONE})`,
      'createdAt UTC',
      `updatedAt (${ZONE})`,
      'updatedAt UTC',
      'organization_id',
      'api_key_id',
    ]);
    expect(ws.views[0]).toMatchObject({ state: 'frozen', ySplit: 1 });
    expect(ws.autoFilter).toBe('A1:O19');
    expect(ws.actualRowCount).toBe(19);
    rows.forEach((r, i) => {
      const row = ws.getRow(i + 2);
      const text = (col: number, expected: string | null) => {
        const cell = row.getCell(col);
        if (expected === null || expected === '') expect(cell.value).toBeNull();
        else {
          expect(TEXT_TYPES).toContain(cell.type);
          expect(valueOf(cell)).toBe(expected);
        }
      };
      for (const [col, key] of [
        [1, 'id'],
        [2, 'reference'],
        [4, 'description'],
        [5, 'status'],
        [6, 'transaction_type'],
        [7, 'phone'],
        [8, 'service_mobile_code'],
        [14, 'organization_id'],
        [15, 'api_key_id'],
      ] as const) {
        text(col, r[key]);
      }
      expect(String(row.getCell(7).value)).toMatch(/^\+\d+$/); // the phone keeps its +
      // one look for the whole column: exact text with separators, right-aligned, not highlighted
      const amount = row.getCell(3);
      expect(amount.type).toBe(ExcelJS.ValueType.String);
      expect(String(amount.value).replace(/,/g, '')).toBe(r.amount);
      expect(amount.alignment).toMatchObject({ horizontal: 'right' });
      expect(highlighted(amount)).toBe(false);
      expect(JSON.parse(String(valueOf(row.getCell(9))))).toEqual(JSON.parse(r.extra));
      expect(String(valueOf(row.getCell(9)))).not.toMatch(/": |, "/); // compact, as the service sends it
      for (const [col, at] of [
        [10, r.created_at as Date],
        [12, r.updated_at as Date],
      ] as const) {
        const cell = row.getCell(col);
        expect(cell.type).toBe(ExcelJS.ValueType.Date);
        expect((cell.value as Date).getTime()).toBe(wallClock(at.toISOString()));
        expect(cell.numFmt).toBe('yyyy-mm-dd hh:mm:ss.000');
        expect(row.getCell(col + 1).value).toBe(at.toISOString());
      }
    });
    // the first record of the local day is 23:00 UTC the evening before: 00:00 on the day's wall clock
    expect((ws.getRow(2).getCell(10).value as Date).toISOString()).toBe('2024-03-10T00:00:00.000Z');
    expect(ws.getRow(2).getCell(11).value).toBe('2024-03-09T23:00:00.000Z');
  });

  it('no formula anywhere, and formula-looking text is the text itself (no apostrophe)', () => {
    const values: string[] = [];
    for (const ws of wb.worksheets) {
      ws.eachRow((row) =>
        row.eachCell((cell) => {
          expect(cell.type).not.toBe(ExcelJS.ValueType.Formula);
          const value = valueOf(cell);
          if (typeof value === 'string') values.push(value);
        }),
      );
    }
    for (const text of [
      '=1+1',
      ' =1+1',
      '  +SUM(A1)',
      '@cmd',
      '-5',
      '=HYPERLINK("http://x")',
      '=cmd',
      '_x0041_',
    ]) {
      expect(values).toContain(text);
    }
    expect(values).toContain("'already quoted"); // the service's own apostrophe stays; none is added
    expect(values.filter((v) => v.startsWith("'="))).toEqual([]);
  });

  it('transfers: names in any script, amounts exact', () => {
    const ws = wb.getWorksheet('transfers')!;
    const names = [2, 3, 4].map((r) => ws.getRow(r).getCell(4).value);
    expect(names).toEqual(['Aïssatou Ndiaye', '=HYPERLINK("http://x")', '李小龙']);
    // every amount exact: numbers, each at its own scale
    expect([2, 3, 4].map((r) => ws.getRow(r).getCell(3).value)).toEqual([1000.5, 2000.25, 3000]);
    expect([2, 3, 4].map((r) => ws.getRow(r).getCell(3).numFmt)).toEqual(['#,##0.0', '#,##0.00', '#,##0']);
  });

  it('a carriage return and the escape syntax come back exactly, as in the CSV', async () => {
    const ws = wb.getWorksheet('payments')!;
    const descriptions = ws.getRows(2, ws.actualRowCount - 1)!.map((r) => valueOf(r.getCell(4)));
    expect(descriptions).toContain('first line\r\nsecond line');
    expect(descriptions).toContain('bare\rreturn _x000D_ literal');
    expect(descriptions).toContain('_x0041_');
    expect(descriptions.join('')).not.toContain('\\u000D');
  });

  it("summary: each stream's total, then its settled money, before the grand total; quarantined rows", async () => {
    const ws = wb.getWorksheet('summary')!;
    const rows = ws.getRows(2, ws.actualRowCount - 1)!.map((r) => (r.values as unknown[]).slice(1));
    const levels = rows.map((r) => `${r[0]} ${r[1] ?? ''}`.trim());
    expect(levels.filter((l) => !l.startsWith('detail'))).toEqual([
      'stream_total payments',
      'stream_settled payments',
      'stream_total transfers',
      'stream_settled transfers',
      'total',
      'total_settled',
      'quarantined payments',
      'quarantined transfers',
      'sign-off', // finance's close under the figures (this manifest carries no digests)
    ]);
    expect(levels.indexOf('stream_total payments')).toBeLessThan(levels.indexOf('detail transfers'));
    const sum = async (table: string, complete: boolean) =>
      (
        await db.pool.query(
          `SELECT coalesce(sum(amount), 0)::text AS s, count(*)::int AS n FROM reporting.${table}
            WHERE created_at >= $1 AND created_at < $2 ${complete ? "AND status = 'COMPLETE'" : ''}`,
          RANGE,
        )
      ).rows[0] as { s: string; n: number };
    const row = (label: string) => rows[levels.indexOf(label)]!;
    const exact = (v: unknown) => String(v).replace(/,/g, '');
    expect(row('stream_settled payments')[2]).toBe('COMPLETE');
    expect(row('stream_settled payments')[5]).toBe((await sum('payments', true)).n);
    expect(exact(row('stream_settled payments')[6])).toBe((await sum('payments', true)).s);
    expect(exact(row('stream_settled transfers')[6])).toBe((await sum('transfers', true)).s);
    expect(row('total')[5]).toBe(21);
    // the grand total has more than 15 significant digits: the whole amount column is exact text
    const grand = await db.pool.query(
      `SELECT (SELECT sum(amount) FROM reporting.payments WHERE created_at >= $1 AND created_at < $2)
            + (SELECT sum(amount) FROM reporting.transfers WHERE created_at >= $1 AND created_at < $2) AS s`,
      RANGE,
    );
    expect(exact(row('total')[6])).toBe(grand.rows[0].s);
    expect(rows.every((r) => r[6] === undefined || typeof r[6] === 'string')).toBe(true);
    expect(row('total')[6]).toMatch(/^-?\d{1,3}(,\d{3})*(\.\d+)?$/);
    // the quarantined records of rejects.csv, counted per stream, never summed
    expect(row('quarantined payments').slice(5)).toEqual([2]);
    expect(row('quarantined transfers').slice(5)).toEqual([0]);
    expect(ws.getRow(levels.indexOf('total') + 2).getCell(1).font?.bold).toBe(true);
  });

  it("rejects: the day's rejects only (by the createdAt they were sent with), raw kept", () => {
    const ws = wb.getWorksheet('rejects')!;
    const ids = ws.getRows(2, ws.actualRowCount - 1)!.map((r) => r.getCell(3).value);
    expect(ids).toEqual(['bad_1', null]);
    const first = ws.getRow(2);
    expect(first.getCell(4).value).toBe('=cmd');
    expect(first.getCell(6).value).toBe('2024-03-10T12:00:00.000Z');
    expect((first.getCell(7).value as Date).getTime()).toBe(wallClock('2024-03-10T10:00:00.250Z'));
    expect(first.getCell(11).value).toBe(1);
    expect(JSON.parse(String(first.getCell(12).value))).toMatchObject({ id: 'bad_1', amount: 'x' });
    expect(ws.getRow(3).getCell(13).value).toBe('{"id":"bad_2", "createdAt": "2024-03-10T13:00:00Z", broken');
  });

  it('rejects: the same records as rejects.csv, in the same order', () => {
    const ws = wb.getWorksheet('rejects')!;
    const sheet = ws
      .getRows(2, ws.actualRowCount - 1)!
      .map((r) => [r.getCell(1).value, r.getCell(2).value, r.getCell(3).value]);
    const csv = parseCsv(rejectsCsv).slice(1); // id, reference, stream, source, …
    expect(csv.map((r) => [r[3], r[2], r[0] || null])).toEqual(sheet);
    expect(sheet).toHaveLength(2);
  });

  it("about: the manifest's facts and a note for every highlighted cell", () => {
    const ws = wb.getWorksheet('about')!;
    const rows = ws.getRows(1, ws.rowCount)!.map((r) => (r.values as unknown[]).slice(1));
    const find = (label: string) => rows.find((r) => r[0] === label);
    expect(find('day')).toEqual(['day', DAY]);
    expect(find('time zone')).toEqual(['time zone', ZONE]);
    expect(find('version')).toEqual(['version', 3]);
    expect(find('layout')?.slice(0, 2)).toEqual(['layout', 1]); // MANIFEST names none: written before layouts
    expect(find('state')).toEqual(['state', 'final']);
    expect(find('payments')).toEqual(['payments', 16, 3316507740.31]);
    expect(rows.some((r) => r[0] === 'amounts as text' && String(r[1]).includes('payments'))).toBe(true);
    expect(find('changes since version')).toEqual(['changes since version', 2]);
    expect(rows.some((r) => r[0] === 'changed' && r.includes('PENDING') && r.includes('COMPLETE'))).toBe(
      true,
    );
    expect(rows.some((r) => String(r[0]).startsWith('highlighted in'))).toBe(false); // nothing altered
    expect(rows.flat().join(' ')).not.toContain('2024-03-11T02:00'); // generatedAt: no clock in the workbook
  });
});

describe('cells a workbook cannot hold exactly', () => {
  it('are written visibly and highlighted, never dropped', async () => {
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`UPDATE reporting.payments SET description = $1 WHERE id = 'p01'`, [
        'a\u0001b\r\nc',
      ]);
      await client.query(`UPDATE reporting.payments SET description = $1 WHERE id = 'p02'`, [
        'x'.repeat(40_000),
      ]);
      const target = await mkdtemp(join(dir, 'odd-'));
      await writePackWorkbook(client, {
        range: RANGE,
        day: DAY,
        zone: ZONE,
        dir: target,
        manifest: MANIFEST,
      });
      await client.query('ROLLBACK');
      const ws = (await readWorkbook(join(target, 'pack.xlsx'))).getWorksheet('payments')!;
      const byId = (id: string) =>
        ws.getRows(2, ws.actualRowCount - 1)!.find((r) => r.getCell(1).value === id)!;
      expect(valueOf(byId('p01').getCell(4))).toBe('a\\u0001b\r\nc'); // the control character visible, CR exact
      expect(highlighted(byId('p01').getCell(4))).toBe(true);
      const long = String(byId('p02').getCell(4).value);
      expect(long.length).toBe(32_767);
      expect(long.endsWith('…')).toBe(true);
    } finally {
      client.release();
    }
  });
});

describe('a day longer than a sheet', () => {
  it('continues on "payments (2)" and counts every row', async () => {
    const { file, path } = await write('split', 10);
    const wb = await readWorkbook(path);
    expect(wb.worksheets.map((w) => w.name).slice(0, 4)).toEqual([
      'summary',
      'payments',
      'payments (2)',
      'transfers',
    ]);
    expect(wb.getWorksheet('payments')!.actualRowCount).toBe(10);
    expect(wb.getWorksheet('payments (2)')!.actualRowCount).toBe(1 + 18 - 9);
    expect(wb.getWorksheet('payments (2)')!.autoFilter).toBe('A1:O10');
    expect(file.sheets.payments).toBe(18);
  });
});

describe('a day of several cursor batches', () => {
  it('streams every record, in order, through the batches', async () => {
    const day = '2024-03-20';
    await insertSyntheticDay(db.pool, day, ZONE, 5_000);
    const w = dayWindow(day, ZONE);
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      const target = await mkdtemp(join(dir, 'batches-'));
      const file = await writePackWorkbook(client, {
        range: [w.start, w.end],
        day,
        zone: ZONE,
        dir: target,
        manifest: { day },
      });
      await client.query('COMMIT');
      expect(file.sheets.payments).toBe(5_000);
      const ws = (await readWorkbook(join(target, 'pack.xlsx'))).getWorksheet('payments')!;
      expect(ws.actualRowCount).toBe(5_001);
      const ids = ws.getRows(2, 5_000)!.map((r) => r.getCell(1).value as string);
      expect(ids).toEqual([...ids].sort());
      expect(ids[4_999]).toBe('pay_20240320_0005000');
      expect(ws.getRow(2).getCell(7).value).toBe('+22990000001');
    } finally {
      client.release();
    }
  });
});

describe('byte-identical re-export', () => {
  it('the same content written twice, seconds apart, gives the same bytes', async () => {
    const first = await write('again-1');
    await new Promise((resolve) => setTimeout(resolve, 2_100)); // a later clock: the zip's dates would differ
    const second = await write('again-2');
    expect(second.file.sha256).toBe(first.file.sha256);
    expect((await readFile(second.path)).equals(await readFile(first.path))).toBe(true);
  });

  it('every ZIP entry carries the same fixed date (no clock in the file)', async () => {
    const { path } = await write('dates');
    const bytes = await readFile(path);
    let entries = 0;
    for (let at = bytes.indexOf(LOCAL_HEADER); at >= 0; at = bytes.indexOf(LOCAL_HEADER, at + 4)) {
      expect(bytes.readUInt16LE(at + 12)).toBe(FIXED_DOS_DATE);
      entries++;
    }
    expect(entries).toBeGreaterThanOrEqual(10);
  });
});
