/**
 * Finance's promise about quarantined records: when the service holds records paysync rightly quarantines
 * (malformed ones), reconcile explains the difference with them and exits 0, listing them; a record lost
 * or changed in the warehouse is still an unexplained difference (exit 1) named by id; the pack carries
 * the day's rejects (rejects.csv, counted in summary.csv and the manifest); /metrics and the status page
 * show a clean reconcile as 0 mismatches, with the quarantined count apart.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { PaysyncMetrics } from '../../src/ops/metrics.js';
import { mismatchesByDay, recentReconcileResults } from '../../src/ops/reconcile-results.js';
import { renderStatusPage } from '../../src/ops/status-page.js';
import { exportDay } from '../../src/reconcile/export-day.js';
import type { Manifest } from '../../src/reconcile/manifest.js';
import { reconcileDay } from '../../src/reconcile/reconcile.js';
import { dayWindow, localDayOf } from '../../src/sync/windows.js';
import { harnessEnv, runCli } from '../helpers/cli-run.js';
import { csvObjects, syncAll, tempExportDir } from '../helpers/export.js';
import { startHarness, type Harness } from '../helpers/sync-harness.js';

const ZONE = 'Africa/Porto-Novo';
let h: Harness;
let exportDir: string;
let day: string;

beforeAll(async () => {
  exportDir = await tempExportDir();
  h = await startHarness({
    name: 'reconcile-quarantine',
    sim: { days: 2, perDay: 80, malformed: 24, switches: { shape: 'wrapper' } },
    env: { REPORT_TIMEZONE: ZONE, EXPORT_DIR: exportDir, PAGE_SIZE: '50' },
  });
  await syncAll(h);
  day = localDayOf(new Date(h.sim.now().getTime() - 86_400_000), ZONE);
});

afterAll(async () => {
  await h?.close();
  await rm(exportDir, { recursive: true, force: true });
});

/** Open rejects whose raw record says it was created in the day (what finance should see for it). */
async function datedRejects(stream: string): Promise<Array<{ record_id: string | null }>> {
  const w = dayWindow(day, ZONE);
  const { rows } = await h.runtime.pool.query(
    `SELECT record_id FROM reporting.sync_rejects
      WHERE stream = $1 AND resolved_at IS NULL
        AND reporting.try_timestamptz(raw->>'createdAt') >= $2
        AND reporting.try_timestamptz(raw->>'createdAt') < $3`,
    [stream, w.start, w.end],
  );
  return rows;
}

describe('quarantined records explain the difference', () => {
  it('reconcile exits 0, every difference explained by quarantined records, each listed', async () => {
    const dated = await datedRejects('payments');
    expect(dated.length).toBeGreaterThan(0); // the day holds malformed payments
    const cli = await runCli(['reconcile', '--day', day], harnessEnv(h));
    expect(cli.stderr).toBe('');
    expect(cli.status).toBe(0);
    expect(cli.stdout).toMatch(/no unexplained differences; \d+ record\(s\) quarantined explain the rest/);

    const result = await reconcileDay(h.runtime, day);
    expect(result.mismatches).toBe(0);
    const quarantined = result.differences.filter((d) => d.kind === 'quarantined');
    expect(result.differences).toEqual(quarantined); // nothing else differs
    expect(quarantined.length).toBe(result.quarantined);
    for (const stream of ['payments', 'transfers'] as const) {
      const rows = result.rows.filter((r) => r.stream === stream);
      const sum = (k: 'service' | 'warehouse' | 'quarantined') => rows.reduce((n, r) => n + r[k], 0);
      expect(sum('service') - sum('warehouse')).toBe(sum('quarantined'));
      // every reject dated in the day is among the listed ones (by id, or one anonymous per no-id reject)
      const listed = quarantined.filter((q) => q.stream === stream);
      for (const r of await datedRejects(stream)) {
        if (r.record_id) expect(listed.map((q) => q.id)).toContain(r.record_id);
      }
      const anonymous = (await datedRejects(stream)).filter((r) => r.record_id === null).length;
      expect(listed.filter((q) => q.id === null).length).toBe(anonymous);
    }
    expect(cli.stdout).toContain(`${quarantined[0]!.id ?? '(no id)'}: quarantined`);
    const json = JSON.parse((await runCli(['reconcile', '--day', day, '--json'], harnessEnv(h))).stdout) as {
      differences: Array<{ kind: string; id: string | null }>;
    };
    expect(json.differences.map((q) => q.id).sort()).toEqual(quarantined.map((q) => q.id).sort());
    // an undocumented status the service uses is a row of its own, explained, not a mismatch
    const refunded = result.rows.find((r) => r.status === 'REFUNDED');
    if (refunded) expect(refunded).toMatchObject({ warehouse: 0, unexplained: 0 });
  });

  it('/metrics and the status page show the clean reconcile as 0 mismatches, quarantined apart', async () => {
    await reconcileDay(h.runtime, day);
    const results = await recentReconcileResults(h.runtime.pool);
    const d = mismatchesByDay(results).find((x) => x.day === day);
    expect(d).toMatchObject({ mismatches: 0 });
    expect(d!.quarantined).toBeGreaterThan(0);
    const metrics = new PaysyncMetrics();
    metrics.recordReconcileResult(d!.day, d!.mismatches, d!.at, d!.quarantined);
    const text = await metrics.render();
    expect(text).toContain(`paysync_reconcile_mismatches{day="${day}"} 0`);
    expect(text).toContain(`paysync_reconcile_quarantined{day="${day}"} ${d!.quarantined}`);
    const html = renderStatusPage({
      status: { queue: {}, streams: [] },
      reconcile: results.filter((r) => r.day === day),
      generatedAt: new Date(),
      queuesPath: '/queues',
      reconcileDays: 14,
    });
    expect(html).not.toMatch(/differ/);
    expect(html.match(/<td>match<\/td>/g)?.length).toBe(2);
  });

  it("the pack carries the day's rejects: rejects.csv, counted in summary.csv and the manifest", async () => {
    await reconcileDay(h.runtime, day);
    const result = await exportDay(h.runtime, day, { now: h.sim.now() });
    const dir = result.dir;
    const rejects = csvObjects(await readFile(join(dir, 'rejects.csv'), 'utf8'));
    const manifest = JSON.parse(await readFile(join(exportDir, day, 'manifest.json'), 'utf8')) as Manifest;
    for (const stream of ['payments', 'transfers'] as const) {
      const inFile = rejects.filter((r) => r.stream === stream);
      expect(inFile.length).toBe(manifest.quarantined[stream]);
      for (const r of await datedRejects(stream)) {
        if (r.record_id) expect(inFile.map((x) => x.id)).toContain(r.record_id);
      }
      const summary = csvObjects(await readFile(join(dir, 'summary.csv'), 'utf8'));
      const line = summary.find((s) => s.level === 'quarantined' && s.stream === stream);
      expect(line?.records).toBe(String(inFile.length));
    }
    expect(manifest.quarantined.payments).toBeGreaterThan(0);
    expect(manifest.files.rejects).toMatchObject({
      path: `v${result.version}/rejects.csv`,
      rows: rejects.length,
    });
    expect(Object.keys(rejects[0]!)).toEqual([
      'id',
      'reference',
      'stream',
      'source',
      'reason',
      'first_seen',
      'raw',
    ]);
    for (const r of rejects) {
      expect(r.reason).not.toBe('');
      expect(r.first_seen).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      expect(r.raw).not.toMatch(/": |, "/); // compact, as the service sends it
      expect(r.raw).not.toMatch(/^[=+\-@\t\r]/);
    }
    expect(manifest.reconcile).toMatchObject({ mismatches: 0 });
    expect(manifest.stateReason).not.toMatch(/unexplained|not reconciled/);
  });
});

describe('a lost or changed record is still a difference', () => {
  it('reconcile exits 1 naming the deleted and the changed record', async () => {
    const w = dayWindow(day, ZONE);
    const { rows } = await h.runtime.pool.query(
      `SELECT id, status FROM reporting.payments WHERE created_at >= $1 AND created_at < $2
        AND status IN ('COMPLETE', 'FAILED') ORDER BY id LIMIT 2`,
      [w.start, w.end],
    );
    const [lost, changed] = rows as Array<{ id: string; status: string }>;
    await h.runtime.pool.query(`DELETE FROM reporting.payments WHERE id = $1`, [lost!.id]);
    const other = changed!.status === 'COMPLETE' ? 'FAILED' : 'COMPLETE';
    await h.runtime.pool.query(`UPDATE reporting.payments SET status = $2 WHERE id = $1`, [
      changed!.id,
      other,
    ]);

    const cli = await runCli(['reconcile', '--day', day], harnessEnv(h));
    expect(cli.status).toBe(1);
    expect(cli.stdout).toContain(`${lost!.id}: missing in warehouse`);
    expect(cli.stdout).toContain(
      `${changed!.id}: status ${other} in warehouse, ${changed!.status} at service`,
    );
    const json = await runCli(['reconcile', '--day', day, '--json'], harnessEnv(h));
    expect(json.status).toBe(1);
    const body = JSON.parse(json.stdout) as { differences: Array<{ kind: string; id: string }> };
    const unexplained = body.differences.filter((d) => d.kind !== 'quarantined');
    expect(unexplained.map((d) => [d.kind, d.id]).sort()).toEqual(
      [
        ['different', changed!.id],
        ['missing_in_warehouse', lost!.id],
      ].sort(),
    );

    const pack = await exportDay(h.runtime, day, { now: h.sim.now() });
    expect(pack.state).toBe('provisional');
    expect(pack.stateReason).toMatch(/unexplained differences/);
    const differences = csvObjects(await readFile(join(pack.dir, 'differences.csv'), 'utf8'));
    expect(differences.map((d) => d.id).sort()).toEqual([lost!.id, changed!.id].sort());
  });
});
