/**
 * pack.xlsx, read back with exceljs's own reader and compared cell by cell with the warehouse: phones
 * and free text are text cells holding exactly the service's text (formula-looking text included, no
 * apostrophe), amounts are numbers equal to the stored decimal or highlighted text when a spreadsheet
 * cannot hold them, times are date-time cells equal to the millisecond to the wall clock in
 * REPORT_TIMEZONE with the exact UTC text beside them, and the same content written twice, seconds
 * apart, gives the same bytes.
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
import { fixZipEntryDates } from '../../src/reconcile/xlsx-zip.js';
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
];
// amount text → a spreadsheet number (exact), or text (flagged)
const AMOUNTS: Array<[string, 'number' | 'text']> = [
  ['3316506243.30', 'number'],
  ['1500', 'number'],
  ['0.01', 'number'],
  ['-250.75', 'number'],
  ['999999999999.99', 'number'], // 14 significant digits
  ['12345678901234567890.123456789', 'text'], // 29 significant digits
  ['1234567890123456.5', 'text'], // 17
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
      amount: AMOUNTS[i % AMOUNTS.length]![0],
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
    makeTransfer({ id: `t${i}`, name, amount: `${1000 * (i + 1)}.5`, createdAt: atMs(i, 5) }),
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

/** A cell's value, text read as one string (exceljs reads an inline string, kept for edge spaces, as rich text). */
function valueOf(cell: ExcelJS.Cell): unknown {
  const v = cell.value as unknown;
  if (v !== null && typeof v === 'object' && 'richText' in v) {
    return (v as { richText: Array<{ text: string }> }).richText.map((r) => r.text).join('');
  }
  return v;
}
const TEXT_TYPES = [ExcelJS.ValueType.String, ExcelJS.ValueType.RichText];

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

  it('has the sheets payments, transfers, summary, rejects, about, in that order, with their row counts', () => {
    expect(wb.worksheets.map((w) => w.name)).toEqual([
      'payments',
      'transfers',
      'summary',
      'rejects',
      'about',
    ]);
    expect(file.sheets).toMatchObject({ payments: 16, transfers: 3, rejects: 2 });
    expect(file.rows).toBe(19);
    expect(file.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('payments: every cell typed and equal to the warehouse', async () => {
    const { rows } = await db.pool.query(
      `SELECT id, reference, amount::text AS amount, description, status, transaction_type, phone,
              service_mobile_code, extra_data::text AS extra, created_at, updated_at, organization_id, api_key_id
         FROM reporting.payments WHERE created_at >= $1 AND created_at < $2
        ORDER BY created_at, id COLLATE "C"`,
      RANGE,
    );
    expect(rows.length).toBe(16);
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
    expect(ws.autoFilter).toBe('A1:O17');
    expect(ws.actualRowCount).toBe(17);
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
      const amount = row.getCell(3);
      const kind = AMOUNTS.find(([a]) => a === r.amount)?.[1] ?? 'number';
      if (kind === 'number') {
        expect(amount.type).toBe(ExcelJS.ValueType.Number);
        expect(amount.value).toBe(Number(r.amount));
        expect((amount.value as number).toFixed(2)).toBe(Number(r.amount).toFixed(2));
        expect(amount.numFmt).toBe('#,##0.00');
      } else {
        expect(amount.type).toBe(ExcelJS.ValueType.String);
        expect(amount.value).toBe(r.amount);
        expect(amount.fill).toMatchObject({ type: 'pattern', pattern: 'solid' });
      }
      expect(JSON.parse(String(row.getCell(9).value))).toEqual(JSON.parse(r.extra));
      expect(String(row.getCell(9).value)).not.toMatch(/": |, "/); // compact, as the service sends it
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
    expect([2, 3, 4].map((r) => ws.getRow(r).getCell(3).value)).toEqual([1000.5, 2000.5, 3000.5]);
    expect(ws.getRow(2).getCell(3).numFmt).toBe('#,##0.0');
  });

  it('summary: the SQL sums, typed, no formula', async () => {
    const ws = wb.getWorksheet('summary')!;
    const total = ws.getRows(2, ws.actualRowCount - 1)!.find((r) => r.getCell(1).value === 'total')!;
    expect(total.getCell(6).value).toBe(19);
    const { rows } = await db.pool.query(
      `SELECT (SELECT sum(amount) FROM reporting.payments WHERE created_at >= $1 AND created_at < $2)
            + (SELECT sum(amount) FROM reporting.transfers WHERE created_at >= $1 AND created_at < $2) AS s`,
      RANGE,
    );
    // the grand total has more than 15 significant digits here: exact text, highlighted
    expect(total.getCell(7).value).toBe(rows[0].s);
    expect(total.getCell(7).fill).toMatchObject({ type: 'pattern' });
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
    expect(find('state')).toEqual(['state', 'final']);
    expect(find('payments')).toEqual(['payments', 16, 3316507740.31]);
    expect(find('changes since version')).toEqual(['changes since version', 2]);
    expect(rows.some((r) => r[0] === 'changed' && r.includes('PENDING') && r.includes('COMPLETE'))).toBe(
      true,
    );
    expect(find('highlighted in payments')?.[1]).toBe(4); // 2 amount kinds x 2 records each
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
      expect(byId('p01').getCell(4).value).toBe('a\\u0001b\\u000D\nc');
      expect(byId('p01').getCell(4).fill).toMatchObject({ type: 'pattern' });
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
    expect(wb.worksheets.map((w) => w.name).slice(0, 3)).toEqual(['payments', 'payments (2)', 'transfers']);
    expect(wb.getWorksheet('payments')!.actualRowCount).toBe(10);
    expect(wb.getWorksheet('payments (2)')!.actualRowCount).toBe(1 + 16 - 9);
    expect(file.sheets.payments).toBe(16);
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

  it('control: exceljs alone writes different bytes seconds apart; fixing the entry dates makes them equal', async () => {
    const plain = async (name: string) => {
      const path = join(dir, name);
      const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: path });
      Object.assign(wb, { created: new Date(0), modified: new Date(0) });
      wb.addWorksheet('a').addRow(['x']).commit();
      await wb.commit();
      return path;
    };
    const a = await plain('plain-a.xlsx');
    await new Promise((resolve) => setTimeout(resolve, 2_100)); // DOS times have a 2 s resolution
    const b = await plain('plain-b.xlsx');
    expect((await readFile(a)).equals(await readFile(b))).toBe(false);
    await fixZipEntryDates(a);
    await fixZipEntryDates(b);
    expect((await readFile(a)).equals(await readFile(b))).toBe(true);
  });
});
