/**
 * The pack as files: a killed export leaves no partial file where a reader looks, and a real spreadsheet
 * engine (LibreOffice, with formula evaluation switched on) opens the pack without running any formula.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { insertSyntheticDay } from '../bench/export-fixture.js';
import { exportDay } from '../src/reconcile/export-day.js';
import { localDayOf } from '../src/sync/windows.js';
import { syncAll, tempExportDir } from './export-helpers.js';
import { startHarness, type Harness } from './helpers/sync-harness.js';

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
  }, 40_000);
});

const soffice = ['soffice', 'libreoffice'].find((bin) => spawnSync(bin, ['--version']).status === 0);
const withLibreOffice = soffice ? it : it.skip;
if (!soffice) {
  console.warn(
    'export-files: LibreOffice is not installed (soffice not found): the spreadsheet check is skipped. ' +
      'Install it with: apt-get install -y --no-install-recommends libreoffice-calc-nogui',
  );
}

/** Converts a CSV to flat ODS with formula evaluation ON, and returns the XML. */
function openInCalc(csv: string, work: string): string {
  const result = spawnSync(
    soffice as string,
    [
      '--headless',
      `-env:UserInstallation=file://${join(work, 'profile')}`,
      // field sep ',', text delim '"', UTF-8, from line 1, …, token 13: evaluate formulas = true
      '--infilter=CSV:44,34,76,1,,0,false,true,false,false,false,-1,true',
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
