/**
 * The pack's layout version: every manifest names the layout its version was written with, and a change
 * of layout alone is not a restatement. A day whose records did not change keeps its published version
 * (files, checksums, layout) when it is exported again by a paysync whose layout is newer; a change of a
 * record makes a new version, in the new layout.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { exportDay } from '../../src/reconcile/export-day.js';
import { PACK_LAYOUT, type Manifest } from '../../src/reconcile/manifest.js';
import { loadPage } from '../../src/warehouse/loader.js';
import { tempExportDir } from '../helpers/export.js';
import { makePayment, makeTransfer } from '../helpers/records.js';
import { startHarness, type Harness } from '../helpers/sync-harness.js';

const ZONE = 'Africa/Porto-Novo';
const DAY = '2021-06-15';
let h: Harness;
let exportDir: string;

beforeAll(async () => {
  exportDir = await tempExportDir();
  h = await startHarness({
    name: 'pack_layout',
    sim: { days: 1, perDay: 10 },
    env: { REPORT_TIMEZONE: ZONE, EXPORT_DIR: exportDir },
  });
  const at = (hour: number) => `${DAY}T${String(hour).padStart(2, '0')}:00:00.000Z`;
  const payments = [1, 2, 3].map((i) =>
    makePayment({ id: `lay_${i}`, amount: `${i}00.50`, createdAt: at(8 + i) }),
  );
  await loadPage(h.runtime.pool, {
    source: 'lay',
    stream: 'payments',
    organizationId: null,
    records: payments,
    rejects: [],
  });
  const transfers = [makeTransfer({ id: 'lay_t', createdAt: at(10) })];
  await loadPage(h.runtime.pool, {
    source: 'lay',
    stream: 'transfers',
    organizationId: 'o',
    records: transfers,
    rejects: [],
  });
});

afterAll(async () => {
  await h?.close();
  await rm(exportDir, { recursive: true, force: true });
});

const dayDir = () => join(exportDir, DAY);
const readManifest = async (...path: string[]) =>
  JSON.parse(await readFile(join(dayDir(), ...path, 'manifest.json'), 'utf8')) as Manifest;
// records loaded directly: no sync window covers the day
const exportIt = () => exportDay(h.runtime, DAY, { allowIncomplete: true });

describe('the layout version', () => {
  it('each manifest names the layout its version was written with', async () => {
    const result = await exportIt();
    expect(result.version).toBe(1);
    expect((await readManifest()).layout).toBe(PACK_LAYOUT);
    expect((await readManifest('v1')).layout).toBe(PACK_LAYOUT);
  });

  it('a re-export of an unchanged day after a layout change keeps the published version as it is', async () => {
    // the day as a paysync with an older layout published it: other bytes in its records file (line ends),
    // its manifests saying so, no layout named, no manifest checksum in the ledger (as before sql/020)
    const csvPath = join(dayDir(), 'v1', 'payments.csv');
    const lf = (await readFile(csvPath, 'utf8')).replaceAll('\r\n', '\n');
    await writeFile(csvPath, lf);
    const payments = { sha256: createHash('sha256').update(lf).digest('hex'), bytes: Buffer.byteLength(lf) };
    const older = async (...path: string[]) => {
      const m = await readManifest(...path);
      const files = { ...m.files, payments: { ...m.files.payments, ...payments } };
      const { layout: _, ...rest } = { ...m, files };
      await writeFile(join(dayDir(), ...path, 'manifest.json'), `${JSON.stringify(rest, null, 2)}\n`);
    };
    await older();
    await older('v1');
    await h.runtime.pool.query('UPDATE reporting.export_versions SET manifest_sha256 = NULL WHERE day = $1', [
      DAY,
    ]);
    const before = await readFile(join(dayDir(), 'v1', 'manifest.json'), 'utf8');
    const again = await exportIt();
    expect(again).toMatchObject({ version: 1, unchanged: true, restated: false });
    expect((await readdir(dayDir())).sort()).toEqual(['manifest.json', 'v1']);
    expect(await readFile(join(dayDir(), 'v1', 'manifest.json'), 'utf8')).toBe(before);
    expect(await readFile(csvPath, 'utf8')).toBe(lf);
    // the top manifest follows the day's current facts (reconcile, sign-off), the version's layout kept
    const top = await readManifest();
    expect(top.layout).toBeUndefined();
    expect(top.files.payments).toMatchObject({ path: 'v1/payments.csv', ...payments });
  });

  it('a changed record makes a new version, written in the current layout', async () => {
    await h.runtime.pool.query(
      `UPDATE reporting.payments SET status = 'FAILED', updated_at = updated_at + interval '1 hour' WHERE id = 'lay_2'`,
    );
    const result = await exportIt();
    expect(result).toMatchObject({ version: 2, restated: true, unchanged: false });
    const top = await readManifest();
    expect(top.layout).toBe(PACK_LAYOUT);
    expect(top.restatement?.changed.records).toEqual([
      expect.objectContaining({ id: 'lay_2', status: expect.objectContaining({ new: 'FAILED' }) }),
    ]);
  });
});
