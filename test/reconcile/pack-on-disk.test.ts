/**
 * Export trusts nothing on disk, each attack tried as a user would, through the CLI on real files: a
 * symlinked day folder is not followed out of EXPORT_DIR; a foreign or a garbled manifest is refused with
 * one line naming the file; any version number on disk is handled; an earlier version edited after
 * publishing is named (exit 1) instead of "unchanged". Pack folders and files are created as the umask
 * allows; a version's own files say where the reconcile result lives instead of "not reconciled yet"; and
 * a restatement reports the records the earlier version held and the new one does not, even when that
 * version was written by another warehouse (a demo run on a later day into the same EXPORT_DIR).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ExcelJS from 'exceljs';
import { exportDay } from '../../src/reconcile/export-day.js';
import type { Manifest } from '../../src/reconcile/manifest.js';
import { localDayOf } from '../../src/sync/windows.js';
import { harnessEnv, runCli } from '../helpers/cli-run.js';
import { csvObjects, syncAll, tempExportDir } from '../helpers/export.js';
import { middayBefore, startHarness, type Harness } from '../helpers/sync-harness.js';

const ZONE = 'Africa/Porto-Novo';
const BIN = fileURLToPath(new URL('../../bin/paysync.js', import.meta.url));
let h: Harness;
let exportDir: string;
let env: Record<string, string>;
const exportCli = (day: string) => runCli(['export', '--day', day, '--allow-incomplete'], env);
const oneLine = (text: string) => text.trim().split('\n');

beforeAll(async () => {
  exportDir = await tempExportDir();
  h = await startHarness({
    name: 'pack-on-disk',
    sim: { days: 2, perDay: 30, now: middayBefore(ZONE) },
    env: { REPORT_TIMEZONE: ZONE, EXPORT_DIR: exportDir, PAGE_SIZE: '100' },
  });
  env = harnessEnv(h);
  await syncAll(h);
}, 60_000);

afterAll(async () => {
  await h?.close();
  await rm(exportDir, { recursive: true, force: true });
});

describe('export never follows links out of EXPORT_DIR', () => {
  it('a symlinked day folder: exit 1 naming it, nothing written where it points', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'paysync-outside-'));
    try {
      await symlink(outside, join(exportDir, '2026-01-10'));
      const r = await exportCli('2026-01-10');
      expect(r.status).toBe(1);
      expect(oneLine(r.stderr)).toEqual([
        expect.stringContaining(`${join(exportDir, '2026-01-10')} is a symbolic link`),
      ]);
      expect(await readdir(outside)).toEqual([]);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });
});

describe('a manifest that is not paysync’s is refused, naming the file', () => {
  it('a foreign manifest.json', async () => {
    const dir = join(exportDir, '2026-01-11');
    await mkdir(dir);
    await writeFile(join(dir, 'manifest.json'), JSON.stringify({ name: 'another tool', files: [] }));
    const r = await exportCli('2026-01-11');
    expect(r.status).toBe(1);
    expect(oneLine(r.stderr)).toEqual([
      expect.stringMatching(new RegExp(`${join(dir, 'manifest.json')} is not a paysync manifest \\(day: `)),
    ]);
    expect(await readdir(dir)).toEqual(['manifest.json']);
  });

  it('a garbled manifest.json', async () => {
    expect((await exportCli('2026-01-12')).status).toBe(0);
    const path = join(exportDir, '2026-01-12', 'manifest.json');
    const text = await readFile(path, 'utf8');
    await writeFile(path, text.slice(0, text.length / 2));
    const r = await exportCli('2026-01-12');
    expect(r.status).toBe(1);
    expect(oneLine(r.stderr)).toEqual([expect.stringContaining(`${path} does not parse as JSON`)]);
  });
});

describe('any version number on disk', () => {
  it('a folder named with a number no pack can have is not a version; a manifest with one is refused', async () => {
    const dir = join(exportDir, '2026-01-13');
    await mkdir(join(dir, 'v99999999999999999999'), { recursive: true });
    const first = await exportCli('2026-01-13');
    expect(first.status).toBe(0);
    expect(first.stdout).toMatch(/: version 1, incomplete/);

    const path = join(dir, 'manifest.json');
    const m = JSON.parse(await readFile(path, 'utf8')) as Manifest;
    // the JSON text a hand or a tool could write: beyond any integer a pack can have
    await writeFile(path, JSON.stringify(m).replace(/"version":\d+/, '"version":99999999999999999999'));
    const r = await exportCli('2026-01-13');
    expect(r.status).toBe(1);
    expect(oneLine(r.stderr)).toEqual([
      expect.stringContaining(`${path} is not a paysync manifest (version: `),
    ]);
  });

  it('a version folder at the largest number: refused with one line instead of an overflow', async () => {
    const dir = join(exportDir, '2026-01-14');
    await mkdir(join(dir, 'v2147483647'), { recursive: true });
    const r = await exportCli('2026-01-14');
    expect(r.status).toBe(1);
    expect(oneLine(r.stderr)).toEqual([
      expect.stringContaining('already holds version 2147483647, the largest'),
    ]);
  });
});

describe('an earlier version edited after publishing', () => {
  it('a re-export names the file (exit 1) instead of "unchanged"', async () => {
    const day = localDayOf(new Date(h.sim.now().getTime() - 86_400_000), ZONE);
    expect((await exportCli(day)).status).toBe(0);
    const path = join(exportDir, day, 'v1', 'payments.csv');
    const csv = await readFile(path, 'utf8');
    const { amount } = csvObjects(csv)[0]!;
    await writeFile(path, csv.replace(`,${amount},`, `,${amount}9,`));
    const r = await exportCli(day);
    expect(r.status).toBe(1);
    expect(r.stdout).not.toMatch(/unchanged/);
    expect(oneLine(r.stderr)).toEqual([expect.stringContaining(`${path}: changed (SHA-256`)]);
    await writeFile(path, csv); // restored: the pack is whole again
    expect((await exportCli(day)).stdout).toMatch(/unchanged, still version 1/);
  });
});

describe('packs are readable as the umask allows', () => {
  it('umask 027: folders 0750, files 0640 (not 0700)', async () => {
    const day = '2026-01-15';
    const command = `umask 027; exec "${process.execPath}" "${BIN}" export --day ${day} --allow-incomplete`;
    await new Promise<void>((ok, fail) =>
      execFile('sh', ['-c', command], { env: { PATH: process.env.PATH ?? '', ...env } }, (e, _o, stderr) =>
        e ? fail(new Error(stderr)) : ok(),
      ),
    );
    const mode = async (...p: string[]) =>
      ((await stat(join(exportDir, day, ...p))).mode & 0o777).toString(8);
    expect(await mode()).toBe('750');
    expect(await mode('v1')).toBe('750');
    for (const file of [
      'manifest.json',
      'v1/manifest.json',
      'v1/payments.csv',
      'v1/summary.csv',
      'v1/pack.xlsx',
    ])
      expect({ file, mode: await mode(file) }).toEqual({ file, mode: '640' });
  });
});

describe("a version's own files never say what will become false", () => {
  it('a version written before reconcile says where the reconcile result lives', async () => {
    const day = localDayOf(new Date(h.sim.now().getTime() - 2 * 86_400_000), ZONE);
    const r = await exportDay(h.runtime, day, { allowIncomplete: true });
    const own = JSON.parse(await readFile(join(r.dir, 'manifest.json'), 'utf8')) as Manifest;
    expect(JSON.stringify(own)).not.toMatch(/not reconciled yet|run `paysync reconcile/);
    expect(own.current).toMatch(
      /top manifest\.json, `paysync status`, `paysync signoff --list` and reporting\.reconcile_results/,
    );
    const book = new ExcelJS.Workbook();
    await book.xlsx.load((await readFile(join(r.dir, 'pack.xlsx'))) as unknown as ArrayBuffer);
    const about = JSON.stringify(book.getWorksheet('about')!.getSheetValues());
    expect(about).not.toMatch(/not run for this day yet|not reconciled yet/);
    expect(about).toMatch(
      /none when this version was written; the latest result is in the day's top manifest\.json/,
    );
  });
});

describe('a restatement reports removed records', () => {
  it('even when the earlier version was written by another warehouse (another dataset in the same EXPORT_DIR)', async () => {
    const other = await startHarness({
      name: 'pack-on-disk-b',
      sim: { seed: 99, days: 2, perDay: 25, now: middayBefore(ZONE) },
      env: { REPORT_TIMEZONE: ZONE, EXPORT_DIR: exportDir, PAGE_SIZE: '100' },
    });
    try {
      await syncAll(other);
      const day = localDayOf(new Date(h.sim.now().getTime() - 86_400_000), ZONE);
      const earlier = csvObjects(await readFile(join(exportDir, day, 'v1', 'payments.csv'), 'utf8'));
      const restated = await exportDay(other.runtime, day, { allowIncomplete: true });
      expect(restated).toMatchObject({ version: 2, restated: true });
      const now = csvObjects(await readFile(join(restated.dir, 'payments.csv'), 'utf8'));
      const ids = new Set(now.map((r) => r.id));
      const gone = earlier.filter((r) => !ids.has(r.id));
      expect(gone.length).toBeGreaterThan(0);
      const m = JSON.parse(await readFile(join(restated.dir, 'manifest.json'), 'utf8')) as Manifest;
      const removed = m.restatement!.removed.records.filter((r) => r.stream === 'payments');
      expect(removed.map((r) => r.id).sort()).toEqual(gone.map((r) => r.id).sort());
      expect(removed.find((r) => r.id === gone[0]!.id)).toEqual({
        stream: 'payments',
        id: gone[0]!.id,
        status: gone[0]!.status,
        amount: gone[0]!.amount,
      });
    } finally {
      await other.close();
    }
  });
});
