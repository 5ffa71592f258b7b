/**
 * pack.xlsx as a finance reader sees it in a real spreadsheet application (LibreOffice Calc, headless):
 * the sheet it opens on and their order, the print setup, amounts shown exactly in one look per column,
 * a carriage return kept, and the summary's settled and quarantined rows.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writePackWorkbook } from '../../src/reconcile/pack-xlsx.js';
import { dayWindow } from '../../src/sync/windows.js';
import { loadPage } from '../../src/warehouse/loader.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { parseCsv } from '../helpers/export.js';
import { makePayment, makeTransfer } from '../helpers/records.js';

const ZONE = 'Africa/Porto-Novo';
const DAY = '2024-05-02';
const w = dayWindow(DAY, ZONE);
const soffice = ['soffice', 'libreoffice'].find((bin) => spawnSync(bin, ['--version']).status === 0);
if (!soffice)
  throw new Error(
    'LibreOffice is not installed: apt-get install -y --no-install-recommends libreoffice-calc-nogui',
  );

let db: TestDatabase;
let work: string;
let fods: string;
const shown: Record<string, string[][]> = {};

/** LibreOffice converts the workbook (every sheet to `pack-<sheet>.csv`, as shown, or to one .fods). */
function convert(to: 'csv' | 'fods'): void {
  const filter =
    to === 'csv' ? 'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,true,false,false,-1' : 'fods';
  const result = spawnSync(
    soffice as string,
    [
      '--headless',
      `-env:UserInstallation=file://${join(work, 'profile')}`,
      '--convert-to',
      filter,
      '--outdir',
      work,
      join(work, 'pack.xlsx'),
    ],
    { encoding: 'utf8', timeout: 90_000 },
  );
  if (result.status !== 0) throw new Error(`soffice failed: ${result.stderr}`);
}

beforeAll(async () => {
  db = await createTestDatabase('pack_xlsx_calc');
  work = await mkdtemp(join(tmpdir(), 'paysync-calc-'));
  const at = (minute: number) => new Date(Date.parse(`${DAY}T09:00:00.000Z`) + minute * 60_000).toISOString();
  const descriptions = ['bare\rreturn', 'two\r\nlines', 'literal _x000D_ text', '=SUM(A1)', ' edge '];
  const payments = descriptions.map((description, i) =>
    makePayment({
      id: `calc_${i}`,
      description,
      amount: ['1500', '0.05', '80395.5', '12.25', '9007199255313891.11'][i]!,
      status: i < 3 ? 'COMPLETE' : 'FAILED',
      createdAt: at(i),
    }),
  );
  await loadPage(db.pool, {
    source: 'c',
    stream: 'payments',
    organizationId: null,
    records: payments,
    rejects: [],
  });
  const transfers = ['1000.5', '2000.25', '3000'].map((amount, i) =>
    makeTransfer({ id: `calc_t${i}`, amount, status: 'COMPLETE', createdAt: at(i) }),
  );
  await loadPage(db.pool, {
    source: 'c',
    stream: 'transfers',
    organizationId: 'o',
    records: transfers,
    rejects: [],
  });
  await db.pool.query(
    `INSERT INTO reporting.sync_rejects (source, stream, record_id, raw, raw_hash, reason, first_seen_at)
     VALUES ('c', 'payments', 'bad', $1, 'h', 'amount: not a decimal', now())`,
    [JSON.stringify({ id: 'bad', amount: 'x', createdAt: `${DAY}T12:00:00.000Z` })],
  );
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    await writePackWorkbook(client, {
      range: [w.start, w.end],
      day: DAY,
      zone: ZONE,
      dir: work,
      manifest: { day: DAY },
    });
    await client.query('COMMIT');
  } finally {
    client.release();
  }
  convert('fods');
  fods = await readFile(join(work, 'pack.fods'), 'utf8');
  convert('csv');
  for (const sheet of ['summary', 'payments', 'transfers', 'rejects']) {
    shown[sheet] = parseCsv(await readFile(join(work, `pack-${sheet}.csv`), 'utf8'), { lineEnds: 'any' });
  }
}, 240_000);

afterAll(async () => {
  await db?.drop();
  await rm(work, { recursive: true, force: true });
});

const column = (sheet: string, header: string) => {
  const [head, ...rows] = shown[sheet]!;
  const at = head!.indexOf(header);
  return rows.map((r) => r[at]);
};

describe('pack.xlsx in LibreOffice', () => {
  it('sheets in the order summary (the first, where it opens), payments, transfers, rejects, about', () => {
    const names = [...fods.matchAll(/<table:table table:name="([^"]+)"/g)].map((m) => m[1]);
    expect(names).toEqual(['summary', 'payments', 'transfers', 'rejects', 'about']);
  });

  it('prints landscape, one page wide, the header row on every page', () => {
    const layouts = [...fods.matchAll(/<style:page-layout-properties[^>]*>/g)].map((m) => m[0]);
    expect(layouts.length).toBeGreaterThan(0);
    for (const layout of layouts) {
      expect(layout).toContain('style:print-orientation="landscape"');
      expect(layout).toContain('style:scale-to-X="1"');
    }
    const payments = fods.slice(fods.indexOf('<table:table table:name="payments"'));
    expect(payments.slice(0, payments.indexOf('</table:table>'))).toContain('<table:table-header-rows>');
  });

  it('amounts: exact, each at its own scale with separators; a column with an amount beyond a number is all text', () => {
    expect(column('transfers', 'amount')).toEqual(['1,000.5', '2,000.25', '3,000']);
    expect(column('payments', 'amount')).toEqual([
      '1,500',
      '0.05',
      '80,395.5',
      '12.25',
      '9,007,199,255,313,891.11',
    ]);
  });

  it("a carriage return is kept (a CR LF is LibreOffice's line break), the escape syntax shown as typed", () => {
    const descriptions = column('payments', 'description');
    expect(descriptions[0]).toBe('bare\rreturn');
    expect(descriptions[1]).toBe('two\nlines'); // LibreOffice holds a CR LF as one line break
    expect(descriptions[2]).toBe('literal _x000D_ text');
    expect(descriptions[3]).toBe('=SUM(A1)');
    expect(descriptions[4]).toBe(' edge ');
    expect(fods).not.toContain('table:formula');
  });

  it("summary: settled money under each stream's total, the grand total, quarantined records", () => {
    const rows = shown.summary!.slice(1).filter((r) => r[0] !== 'detail');
    expect(rows.map((r) => [r[0], r[1], r[2], r[5], r[6]])).toEqual([
      ['stream_total', 'payments', '', '5', '9,007,199,255,395,798.91'],
      ['stream_settled', 'payments', 'COMPLETE', '3', '81,895.55'],
      ['stream_total', 'transfers', '', '3', '6,000.75'],
      ['stream_settled', 'transfers', 'COMPLETE', '3', '6,000.75'],
      ['total', '', '', '8', '9,007,199,255,401,799.66'],
      ['total_settled', '', 'COMPLETE', '6', '87,896.30'],
      ['quarantined', 'payments', '', '1', ''],
      ['quarantined', 'transfers', '', '0', ''],
      // finance's close under the figures (this manifest carries no digests)
      [
        'sign-off',
        '',
        "the day's sign-off state: the day's top manifest.json, `paysync signoff --list`",
        '',
        '',
      ],
    ]);
    expect(column('rejects', 'record_id')).toEqual(['bad']);
  });
});
