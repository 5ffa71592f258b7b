/**
 * The pack as files: a killed export leaves no partial file where a reader looks, and a real spreadsheet
 * engine (LibreOffice, with formula evaluation switched on) opens the pack without running any formula.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { DateTime } from 'luxon';
import { insertSyntheticDay } from '../../bench/export-fixture.js';
import { exportDay } from '../../src/reconcile/export-day.js';
import { dayWindow, localDayOf } from '../../src/sync/windows.js';
import { loadPage } from '../../src/warehouse/loader.js';
import { parseCsv, syncAll, tempExportDir } from '../helpers/export.js';
import { makePayment, makeTransfer } from '../helpers/records.js';
import { startHarness, type Harness } from '../helpers/sync-harness.js';

const ZONE = 'Africa/Porto-Novo';
let h: Harness;
let exportDir: string;

beforeAll(async () => {
  exportDir = await tempExportDir();
  h = await startHarness({
    name: 'export-files',
    sim: { days: 2, perDay: 240 },
    env: { REPORT_TIMEZONE: ZONE, EXPORT_DIR: exportDir, PAGE_SIZE: '100' },
  });
  await syncAll(h);
});

afterAll(async () => {
  await h?.close();
  await rm(exportDir, { recursive: true, force: true });
});

async function waitFor(check: () => Promise<boolean>, ms: number): Promise<void> {
  for (const until = Date.now() + ms; Date.now() < until; await new Promise((r) => setTimeout(r, 10))) {
    if (await check()) return;
  }
  throw new Error(`condition not met within ${ms} ms`);
}

describe('a killed export', () => {
  it('leaves no partial file where a reader looks, and the next export publishes a whole pack', async () => {
    const cli = 'dist/src/reconcile/export-day.js';
    expect(existsSync(cli) ? 'built' : `missing ${cli}: run npm run build first`).toBe('built');
    const day = '2020-03-10';
    await insertSyntheticDay(h.runtime.pool, day, ZONE, 150_000);
    const dayDir = join(exportDir, day);
    const child = spawn(process.execPath, ['bin/paysync.js', 'export', '--day', day, '--allow-incomplete'], {
      env: { ...process.env, DATABASE_URL: h.databaseUrl, EXPORT_DIR: exportDir, REPORT_TIMEZONE: ZONE },
      stdio: 'ignore',
    });
    const exited = new Promise((resolve) => child.on('exit', resolve));
    await waitFor(async () => {
      const temp = existsSync(dayDir)
        ? (await readdir(dayDir)).find((n) => n.startsWith('.tmp-'))
        : undefined;
      const partial = temp ? join(dayDir, temp, 'payments.csv') : '';
      return partial !== '' && existsSync(partial) && (await stat(partial)).size > 0;
    }, 20_000);
    child.kill('SIGKILL');
    await exited;
    const left = await readdir(dayDir);
    expect(left.filter((n) => !n.startsWith('.tmp-'))).toEqual([]); // no v1/, no manifest.json

    // a synthetic day no sync window covers: published as incomplete
    const result = await exportDay(h.runtime, day, { allowIncomplete: true });
    expect(result).toMatchObject({ version: 1, counts: { payments: 150_000 }, state: 'incomplete' });
    expect((await readdir(dayDir)).sort()).toEqual(['manifest.json', 'v1']);
    const csv = await readFile(join(dayDir, 'v1', 'payments.csv'), 'utf8');
    expect(csv.split('\r\n').length).toBe(150_000 + 2); // header + rows + the final line end
    expect(result.dir).toBe(join(dayDir, 'v1'));
    expect(existsSync(join(dayDir, 'v1', 'pack.xlsx'))).toBe(true);
  }, 240_000); // the workbook of 150k payments: about 10 s on a quiet machine, much more on a busy one
});

const soffice = ['soffice', 'libreoffice'].find((bin) => spawnSync(bin, ['--version']).status === 0);
const withLibreOffice = soffice ? it : it.skip;
if (!soffice) {
  console.warn(
    'export-files: LibreOffice is not installed (soffice not found): the spreadsheet check is skipped. ' +
      'Install it with: apt-get install -y --no-install-recommends libreoffice-calc-nogui',
  );
}

/** Converts a CSV to flat ODS with formula evaluation ON (and trimmed spaces if asked), returns the XML. */
function openInCalc(csv: string, work: string, trimSpaces = false): string {
  const result = spawnSync(
    soffice as string,
    [
      '--headless',
      `-env:UserInstallation=file://${join(work, 'profile')}`,
      // field sep ',', text delim '"', UTF-8, from line 1, …, token 11: trim spaces, 13: evaluate formulas
      `--infilter=CSV:44,34,76,1,,0,false,true,false,false,${trimSpaces},-1,true`,
      '--convert-to',
      'fods',
      '--outdir',
      work,
      csv,
    ],
    { encoding: 'utf8', timeout: 60_000 },
  );
  if (result.status !== 0) throw new Error(`soffice failed: ${result.stderr}`);
  const out = join(
    work,
    csv
      .split('/')
      .pop()!
      .replace(/\.csv$/, '.fods'),
  );
  return spawnSync('cat', [out], { encoding: 'utf8', maxBuffer: 1 << 28 }).stdout;
}

describe('the pack in a real spreadsheet engine', () => {
  withLibreOffice(
    'LibreOffice opens payments.csv and transfers.csv with no formula evaluated',
    async () => {
      const day = localDayOf(new Date(h.sim.now().getTime() - 86_400_000), ZONE);
      const { dir } = await exportDay(h.runtime, day);
      const work = await mkdtemp(join(tmpdir(), 'paysync-calc-'));
      try {
        // control: the same engine and options do run a formula from a raw CSV
        await writeFile(join(work, 'control.csv'), 'a\r\n=1+1\r\n');
        expect(openInCalc(join(work, 'control.csv'), work)).toContain('table:formula="of:=1+1"');
        for (const file of ['payments.csv', 'transfers.csv']) {
          const xml = openInCalc(join(dir, file), work);
          expect(xml).not.toContain('table:formula');
          expect(xml).toMatch(/text:p>&apos;=(HYPERLINK|1\+1)/); // the formula text is there, as text
        }
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    },
    40_000,
  );
});

/** A LibreOffice profile that recalculates every formula of an .xlsx when it opens it (never trusts cached values). */
async function recalculatingProfile(work: string): Promise<string> {
  const profile = join(work, 'xlsx-profile');
  await mkdir(join(profile, 'user'), { recursive: true });
  await writeFile(
    join(profile, 'user', 'registrymodifications.xcu'),
    `<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop></item>
</oor:items>
`,
  );
  return profile;
}

/** LibreOffice converts every sheet of `xlsx` to `<name>-<sheet>.csv` (cells as shown) or to one .fods. */
function convertXlsx(xlsx: string, profile: string, outDir: string, to: 'csv' | 'fods'): void {
  const filter =
    to === 'csv' ? 'csv:Text - txt - csv (StarCalc):44,34,76,1,,0,false,true,true,false,false,-1' : 'fods';
  const result = spawnSync(
    soffice as string,
    [
      '--headless',
      `-env:UserInstallation=file://${profile}`,
      '--convert-to',
      filter,
      '--outdir',
      outDir,
      xlsx,
    ],
    { encoding: 'utf8', timeout: 60_000 },
  );
  if (result.status !== 0) throw new Error(`soffice failed: ${result.stderr}`);
}

/** How a spreadsheet shows a decimal with `decimals` places and thousands separators (en-US), on strings. */
function shown(decimal: string, decimals: number): string {
  const [, sign, int, frac = ''] = /^(-?)(\d+)(?:\.(\d+))?$/.exec(decimal)!;
  const grouped = int!.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return `${sign}${grouped}${decimals > 0 ? `.${frac.padEnd(decimals, '0')}` : ''}`;
}

describe('pack.xlsx in LibreOffice, formulas recalculated on load', () => {
  const day = '2020-03-12';
  const texts = [
    ' =1+1',
    '=1+1',
    '=HYPERLINK("http://x")',
    '@SUM(A1)',
    'crédit à Thiès — 日本語 💸',
    ' two  spaces ',
    '-5',
  ];

  let dir: string;
  beforeAll(async () => {
    const zone = ZONE;
    const noon = Date.parse(`${day}T11:00:00.000Z`);
    const payments = texts.map((text, i) =>
      makePayment({
        id: `lo_${i}`,
        description: text,
        reference: i % 2 ? text : `R-${i}`,
        amount: ['3316506243.30', '1500', '0.05', '-12.5', '12345678901234567890.12', '7', '99.99'][i]!,
        phone: i % 2 ? '+22997123456' : '+2250712345678',
        createdAt: new Date(noon + i * 3_600_000 + i * 111).toISOString(),
      }),
    );
    payments.push(makePayment({ id: 'lo_first', createdAt: dayWindow(day, zone).start.toISOString() }));
    const pool = h.runtime.pool;
    await loadPage(pool, {
      source: 'lo',
      stream: 'payments',
      organizationId: null,
      records: payments,
      rejects: [],
    });
    const transfers = [makeTransfer({ id: 'lo_t', name: ' =2+2', createdAt: new Date(noon).toISOString() })];
    await loadPage(pool, {
      source: 'lo',
      stream: 'transfers',
      organizationId: 'o',
      records: transfers,
      rejects: [],
    });
    dir = (await exportDay(h.runtime, day, { allowIncomplete: true })).dir; // records loaded directly: no sync window covers the day
  });

  it('the manifests name pack.xlsx with its SHA-256, size and rows per sheet', async () => {
    const bytes = await readFile(join(dir, 'pack.xlsx'));
    const inVersion = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'));
    const top = JSON.parse(await readFile(join(dir, '..', 'manifest.json'), 'utf8'));
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    expect(inVersion.files.xlsx).toEqual({
      path: 'pack.xlsx',
      rows: 9,
      bytes: bytes.length,
      sha256,
      sheets: { payments: 8, transfers: 1, summary: expect.any(Number) },
    });
    expect(top.files.xlsx).toMatchObject({ path: `v${top.version}/pack.xlsx`, sha256 });
  });

  withLibreOffice(
    "shows the warehouse's values (phones with +, exact amounts, dates to the ms, unicode) and runs no formula",
    async () => {
      const zone = ZONE;
      const pool = h.runtime.pool;
      const work = await mkdtemp(join(tmpdir(), 'paysync-calc-xlsx-'));
      try {
        const profile = await recalculatingProfile(work);
        // control: this profile does recalculate a formula (its cached value 5 becomes 2)
        const control = new ExcelJS.Workbook();
        control.addWorksheet('c').addRow([{ formula: '1+1', result: 5 }]);
        await control.xlsx.writeFile(join(work, 'control.xlsx'));
        convertXlsx(join(work, 'control.xlsx'), profile, work, 'csv');
        expect((await readFile(join(work, 'control-c.csv'), 'utf8')).trim()).toBe('2');

        convertXlsx(join(dir, 'pack.xlsx'), profile, work, 'fods');
        const fods = await readFile(join(work, 'pack.fods'), 'utf8');
        expect(fods).not.toContain('table:formula');
        convertXlsx(join(dir, 'pack.xlsx'), profile, work, 'csv');
        const sheet = async (name: string) =>
          parseCsv(await readFile(join(work, `pack-${name}.csv`), 'utf8'), { lineEnds: 'any' });
        const shownPayments = await sheet('payments');
        const w = dayWindow(day, zone);
        const { rows } = await pool.query(
          `SELECT id, reference, amount::text AS amount, description, phone, created_at
             FROM reporting.payments WHERE created_at >= $1 AND created_at < $2 ORDER BY created_at, id COLLATE "C"`,
          [w.start, w.end],
        );
        expect(shownPayments.length).toBe(rows.length + 1);
        const header = shownPayments[0]!;
        const at = (name: string) => header.indexOf(name);
        rows.forEach((r, i) => {
          const cells = shownPayments[i + 1]!;
          expect(cells[at('id')]).toBe(r.id);
          expect(cells[at('reference')]).toBe(r.reference);
          expect(cells[at('description')]).toBe(r.description); // formula text shown as text, spaces kept
          expect(cells[at('phone')]).toBe(r.phone);
          expect(cells[at('phone')]).toMatch(/^\+\d+$/);
          const amount = r.amount as string;
          // one amount of the day is beyond a spreadsheet number: the whole column is exact text
          expect(cells[at('amount')]).toBe(shown(amount, amount.split('.')[1]?.length ?? 0));
          const local = DateTime.fromJSDate(r.created_at as Date, { zone }).toFormat(
            'yyyy-MM-dd HH:mm:ss.SSS',
          );
          expect(cells[at(`createdAt (${zone})`)]).toBe(local);
          expect(cells[at('createdAt UTC')]).toBe((r.created_at as Date).toISOString());
        });
        expect(shownPayments.flat()).toContain(' =1+1');
        expect(shownPayments.flat()).toContain('crédit à Thiès — 日本語 💸');
        expect((await sheet('transfers'))[1]).toContain(' =2+2');
        expect((await sheet('about')).flat()).toContain(day);
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    },
    90_000,
  );

  withLibreOffice(
    'payments.csv opened with "trim spaces" on: a formula behind spaces stays text',
    async () => {
      const work = await mkdtemp(join(tmpdir(), 'paysync-calc-trim-'));
      try {
        await writeFile(join(work, 'control.csv'), 'a\r\n =1+1\r\n');
        expect(openInCalc(join(work, 'control.csv'), work, true)).toContain('table:formula="of:=1+1"');
        for (const file of ['payments.csv', 'transfers.csv']) {
          const xml = openInCalc(join(dir, file), work, true);
          expect(xml).not.toContain('table:formula');
        }
        expect(openInCalc(join(dir, 'payments.csv'), work, true)).toMatch(
          /text:p>&apos;<text:s\/>=1\+1|text:p>&apos; =1\+1/,
        );
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    },
    60_000,
  );
});
