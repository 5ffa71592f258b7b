/**
 * `paysync reconcile`: the warehouse against the service for one local day, per stream and status, on
 * real HTTP and PostgreSQL, whatever the service answers at its open points.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { exportDay } from '../../src/reconcile/export-day.js';
import type { Manifest } from '../../src/reconcile/manifest.js';
import { reconcileDay } from '../../src/reconcile/reconcile.js';
import { formatTable } from '../../src/reconcile/reconcile-table.js';
import type { SimOptions } from '../../src/sim/types.js';
import { dayWindow, localDayOf } from '../../src/sync/windows.js';
import { normaliseDecimal, syncAll, tempExportDir } from '../helpers/export.js';
import { startHarness, type Harness } from '../helpers/sync-harness.js';

const ZONE = 'Africa/Porto-Novo';
let h: Harness | null = null;
let exportDir = '';
afterEach(async () => {
  await h?.close();
  h = null;
  await rm(exportDir, { recursive: true, force: true });
});

async function synced(name: string, switches: SimOptions['switches'] = {}) {
  exportDir = await tempExportDir();
  h = await startHarness({
    name,
    sim: { days: 3, perDay: 120, switches },
    env: { REPORT_TIMEZONE: ZONE, EXPORT_DIR: exportDir, PAGE_SIZE: '50' },
  });
  await syncAll(h);
  const day = localDayOf(new Date(h.sim.now().getTime() - 86_400_000), ZONE);
  return { h, day };
}

describe('reconcile reports 0 differences on a synced day', () => {
  it.each<[string, SimOptions['switches'], string]>([
    ['page wrapper with totals', { shape: 'wrapper' }, 'wrapper-total'],
    ['bare arrays (no total: counted by paging)', { shape: 'array', pageCap: 20 }, 'paged'],
    [
      'exclusive bounds, unordered',
      { shape: 'wrapper', dateFromInclusive: false, dateToInclusive: false, paymentOrder: 'unordered' },
      'wrapper-total',
    ],
    ['a lying total (falls back to paging)', { shape: 'wrapper', totalOffset: 3 }, 'paged'],
  ])('%s', async (_label, switches, method) => {
    const { h, day } = await synced('reconcile-ok', switches);
    const result = await reconcileDay(h.runtime, day);
    expect(result.mismatches).toBe(0);
    const payments = result.rows.filter((r) => r.stream === 'payments');
    expect(payments.every((r) => r.method === method)).toBe(true);
    const inDay = h.sim.payments(h.org).filter((p) => localDayOf(new Date(p.createdAt), ZONE) === day);
    expect(payments.reduce((n, r) => n + r.service, 0)).toBe(inDay.length);
    if (method === 'paged') {
      for (const r of payments.filter((p) => p.service > 0)) {
        expect(normaliseDecimal(r.serviceAmount!)).toBe(normaliseDecimal(r.warehouseAmount!));
      }
    }
  });
});

describe('reconcile finds what the warehouse lacks', () => {
  it('reports the right differences per status after rows are deleted, records them and exits 1', async () => {
    const { h, day } = await synced('reconcile-diff', { shape: 'wrapper' });
    await exportDay(h.runtime, day);
    const w = dayWindow(day, ZONE);
    const deleted = await h.runtime.pool.query(
      `DELETE FROM reporting.payments WHERE id IN (
         SELECT id FROM reporting.payments WHERE created_at >= $1 AND created_at < $2 ORDER BY id LIMIT 5)
       RETURNING status`,
      [w.start, w.end],
    );
    await h.runtime.pool.query(
      `DELETE FROM reporting.transfers WHERE id IN (
         SELECT id FROM reporting.transfers WHERE created_at >= $1 AND created_at < $2 ORDER BY id LIMIT 2)`,
      [w.start, w.end],
    );
    const expected = new Map<string, number>();
    for (const r of deleted.rows) expected.set(r.status, (expected.get(r.status) ?? 0) + 1);

    const result = await reconcileDay(h.runtime, day);
    const differences = Object.fromEntries(
      result.rows
        .filter((r) => r.stream === 'payments' && r.difference !== 0)
        .map((r) => [r.status, r.difference]),
    );
    expect(differences).toEqual(Object.fromEntries(expected));
    const transfers = result.rows.filter((r) => r.stream === 'transfers');
    expect(transfers.reduce((n, r) => n + r.unexplained, 0)).toBe(2);
    const transferMismatches = transfers.filter((r) => r.unexplained !== 0).length;
    expect(result.mismatches).toBe(expected.size + transferMismatches);
    expect(formatTable(day, result.rows)).toMatch(/row\(s\) with unexplained differences/);

    const stored = await h.runtime.pool.query(
      `SELECT sum(difference)::int AS d FROM reporting.reconcile_results WHERE day = $1`,
      [day],
    );
    expect(stored.rows[0].d).toBe(7);
    const manifest = JSON.parse(await readFile(join(exportDir, day, 'manifest.json'), 'utf8')) as Manifest;
    expect(manifest.reconcile?.mismatches).toBe(expected.size + transferMismatches);
    // the pack follows its reconcile: a new version carrying the named records in differences.csv
    expect(manifest.version).toBe(2);
    expect(manifest.state).toBe('provisional');
    expect(manifest.files.differences?.rows).toBe(7);
  });
});
