/**
 * A day that cannot be completed is never silent: after its window failed BLOCKED_AFTER runs in a row for
 * a reason other than an outage, the day is `blocked` with its reasons in `paysync status` (exit 1), in
 * the status facts and /metrics (`paysync_day_blocked`), and `export --allow-incomplete` publishes it
 * with the reasons in the manifest and on the workbook's summary sheet. An outage, however long, blocks
 * nothing. Real HTTP (the simulator), PostgreSQL and Redis; the CLI as a user runs it.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import ExcelJS from 'exceljs';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { blockedDays } from '../../src/ops/blocked-days.js';
import { PaysyncMetrics } from '../../src/ops/metrics.js';
import { tickPayments } from '../../src/sync/tick.js';
import { localDayOf } from '../../src/sync/windows.js';
import { harnessEnv, runCli } from '../helpers/cli-run.js';
import { tempExportDir } from '../helpers/export.js';
import { startHarness, type Harness } from '../helpers/sync-harness.js';
import { harnessStatus } from '../helpers/ops.js';

let h: Harness | null = null;
let exportDir: string | null = null;
afterEach(async () => {
  await h?.close();
  if (exportDir) await rm(exportDir, { recursive: true, force: true });
  h = null;
  exportDir = null;
});

const tick = (hh: Harness) => tickPayments(hh.runtime.syncContext(hh.settings.sources[0]!));

describe('a day that cannot be completed is never silent', () => {
  it('blocked after BLOCKED_AFTER failed runs: status, metrics and an incomplete export carry its reasons', async () => {
    exportDir = await tempExportDir();
    h = await startHarness({
      name: 'blocked-days',
      sim: { days: 2, perDay: 40, switches: { shape: 'wrapper', ignorePage: true } },
      env: { BLOCKED_AFTER: '2', UPSTREAM_RETRIES: '0', EXPORT_DIR: exportDir, PAGE_SIZE: '10' },
    });
    const day = localDayOf(new Date(h.sim.now().getTime() - 86_400_000), 'UTC');
    await tick(h);
    expect(await blockedDays(h.runtime.pool, 'UTC', 2)).toEqual([]); // one failed run: not yet
    await tick(h);
    const blocked = await blockedDays(h.runtime.pool, 'UTC', 2);
    expect(blocked.map((d) => d.day)).toContain(day);
    const one = blocked.find((d) => d.day === day)!;
    expect(one).toMatchObject({ source: 'default', stream: 'payments', failures: 2 });
    expect(one.reasons.map((r) => r.code)).toEqual(['PAGE_IGNORED']);

    // the facts ops reads (status page, health phases) and the gauge
    const status = await harnessStatus(h);
    const payments = status.streams.find((s) => s.stream === 'payments')!;
    expect(payments.blockedDays).toContain(day);
    const metrics = new PaysyncMetrics();
    metrics.setStatus(status);
    expect(await metrics.registry.metrics()).toContain(
      `paysync_day_blocked{source="default",stream="payments",day="${day}"} 1`,
    );

    // paysync status names the day, the reason and what to do, and exits 1
    const env = harnessEnv(h, { BLOCKED_AFTER: '2', EXPORT_DIR: exportDir });
    const cli = await runCli(['status'], env);
    expect(cli.status).toBe(1);
    expect(cli.stdout).toContain(`${day} default/payments blocked after 2 failed runs (PAGE_IGNORED)`);
    expect(cli.stdout).toMatch(/PAGE_IGNORED: the service ignores `page`/);
    expect(cli.stdout).toMatch(/what to do: tell the service’s owners/);

    // export refuses the day, and publishes it incomplete with its reasons when allowed
    expect((await runCli(['export', '--day', day], env)).status).toBe(1);
    const exported = await runCli(['export', '--day', day, '--allow-incomplete'], env);
    expect(exported.stderr).toBe('');
    expect(exported.status).toBe(0);
    const manifest = JSON.parse(await readFile(join(exportDir, day, 'manifest.json'), 'utf8'));
    expect(manifest.state).toBe('incomplete');
    expect(manifest.stateReason).toMatch(/blocked: its windows failed 2 runs in a row \(PAGE_IGNORED\)/);
    expect(manifest.blocked).toEqual([
      {
        source: 'default',
        stream: 'payments',
        failures: 2,
        reasons: [
          {
            code: 'PAGE_IGNORED',
            meaning: expect.stringMatching(/ignores `page`/),
            action: expect.any(String),
            detail: expect.stringMatching(/ignores `page`/),
          },
        ],
      },
    ]);
    const own = JSON.parse(await readFile(join(exportDir, day, 'v1', 'manifest.json'), 'utf8'));
    expect(own.blocked).toEqual(manifest.blocked);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(join(exportDir, day, 'v1', 'pack.xlsx'));
    const summary: string[][] = [];
    wb.getWorksheet('summary')!.eachRow((row) => {
      summary.push((row.values as unknown[]).slice(1).map((v) => String(v ?? '')));
    });
    const rows = summary.filter((r) => r[0] === 'blocked');
    expect(rows).toHaveLength(1);
    expect(rows[0]![1]).toBe('payments');
    expect(rows[0]![2]).toMatch(/^default: PAGE_IGNORED after 2 failed runs: .*; what to do: /);
  });

  it('an outage blocks nothing, however many ticks it lasts', async () => {
    h = await startHarness({
      name: 'blocked-outage',
      sim: { days: 1, perDay: 20 },
      env: { BLOCKED_AFTER: '2', UPSTREAM_RETRIES: '0' },
    });
    h.sim.setSwitches({ outage: 'unavailable' });
    for (let i = 0; i < 3; i++) await tick(h);
    const failed = await h.runtime.pool.query(
      `SELECT count(*)::int AS n FROM reporting.sync_windows WHERE outcome = 'failed' AND attempts >= 3`,
    );
    expect(failed.rows[0].n).toBeGreaterThan(0);
    expect(await blockedDays(h.runtime.pool, 'UTC', 2)).toEqual([]);
  });
});
