/**
 * Every difference names its records, and what a re-read can fix is fixed without a person:
 * - records lost from the warehouse and a copy older than the service's (the service changed the status
 *   after paysync's last read): `reconcile --day D` exits 1 naming exactly those ids; `--heal` re-reads the
 *   day, exits 0, and the warehouse equals the simulator;
 * - a record the service does not list: listed as missing at the source; `--heal` keeps and flags it,
 *   exits 1, and the pack's differences.csv holds it;
 * - the worker's daily job heals a day with a difference before publishing it, and the manifest records
 *   that reconcile;
 * - one reconcile per day at a time (a lease), and a service that cannot be reached is said so, with
 *   nothing recorded.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { runDailyExport } from '../../src/reconcile/daily-export.js';
import { exportDay } from '../../src/reconcile/export-day.js';
import type { Manifest } from '../../src/reconcile/manifest.js';
import { reconcileDay, ReconcileUnreachableError } from '../../src/reconcile/reconcile.js';
import { dayWindow, localDayOf } from '../../src/sync/windows.js';
import { harnessEnv, runCli } from '../helpers/cli-run.js';
import { csvObjects, syncAll, tempExportDir } from '../helpers/export.js';
import { middayBefore, paymentDifferences, startHarness, type Harness } from '../helpers/sync-harness.js';

const ZONE = 'Africa/Porto-Novo';
const DAY_MS = 86_400_000;
let h: Harness;
let exportDir: string;
const dayAgo = (n: number) => localDayOf(new Date(h.sim.now().getTime() - n * DAY_MS), ZONE);

beforeAll(async () => {
  exportDir = await tempExportDir();
  h = await startHarness({
    name: 'reconcile-heal',
    sim: { days: 3, perDay: 80, switches: { shape: 'wrapper' }, now: middayBefore(ZONE) },
    env: { REPORT_TIMEZONE: ZONE, EXPORT_DIR: exportDir, PAGE_SIZE: '50' },
  });
  await syncAll(h);
});

afterAll(async () => {
  await h?.close();
  await rm(exportDir, { recursive: true, force: true });
});

const manifestOf = async (day: string) =>
  JSON.parse(await readFile(join(exportDir, day, 'manifest.json'), 'utf8')) as Manifest;

/** Two payments of the day deleted, one held with an older copy in another status; their ids. */
async function damage(day: string): Promise<{ lost: string[]; stale: string }> {
  const w = dayWindow(day, ZONE);
  const { rows } = await h.runtime.pool.query<{ id: string }>(
    `SELECT id FROM reporting.payments WHERE created_at >= $1 AND created_at < $2 AND status = 'COMPLETE'
      ORDER BY id LIMIT 3`,
    [w.start, w.end],
  );
  const [a, b, c] = rows.map((r) => r.id) as [string, string, string];
  await h.runtime.pool.query(`DELETE FROM reporting.payments WHERE id = ANY($1)`, [[a, b]]);
  await h.runtime.pool.query(
    `UPDATE reporting.payments SET status = 'PENDING', updated_at = updated_at - interval '1 second'
      WHERE id = $1`,
    [c],
  );
  return { lost: [a, b], stale: c };
}

describe('reconcile names the records, --heal fixes what a re-read can', () => {
  it('lost and stale records: exit 1 naming exactly them; --heal re-reads, exit 0, warehouse = simulator', async () => {
    const day = dayAgo(1);
    const { lost, stale } = await damage(day);
    const plain = await runCli(['reconcile', '--day', day, '--json'], harnessEnv(h));
    expect(plain.status).toBe(1);
    const body = JSON.parse(plain.stdout) as { differences: Array<{ kind: string; id: string }> };
    expect(body.differences.map((d) => `${d.kind} ${d.id}`).sort()).toEqual(
      [...lost.map((id) => `missing_in_warehouse ${id}`), `different ${stale}`].sort(),
    );
    expect(await paymentDifferences(h)).not.toEqual([]);

    const healed = await runCli(['reconcile', '--day', day, '--heal'], harnessEnv(h));
    expect(healed.stderr).toMatch(new RegExp(`re-reading default/payments ${day} \\(attempt 1 of 3\\)`));
    expect(healed.stdout).toMatch(/\nno differences\n/);
    expect(healed.status).toBe(0);
    expect(await paymentDifferences(h)).toEqual([]);
  });

  it('a record the service does not list: missing at source; --heal keeps and flags it, exit 1, in differences.csv', async () => {
    const day = dayAgo(2);
    const w = dayWindow(day, ZONE);
    const ghost = 'ghost_payment_1';
    await h.runtime.pool.query(
      `INSERT INTO reporting.payments (id, reference, amount, description, status, transaction_type, phone,
         service_mobile_code, extra_data, created_at, updated_at, organization_id, api_key_id, source)
       VALUES ($1, 'GHOST-1', 1234.50, 'gone from the service', 'COMPLETE', 'PAYMENT', NULL, 'MTN_BJ', '{}',
               $2, $2, $3, 'k', 'default')`,
      [ghost, new Date(w.start.getTime() + 3_600_000), h.org],
    );
    const plain = await runCli(['reconcile', '--day', day], harnessEnv(h));
    expect(plain.status).toBe(1);
    expect(plain.stdout).toContain(
      `default/payments ${ghost}: missing at source (warehouse: COMPLETE 1234.50)`,
    );

    const healed = await runCli(['reconcile', '--day', day, '--heal'], harnessEnv(h));
    expect(healed.status).toBe(1);
    expect(healed.stderr).not.toMatch(/re-reading/); // a re-read cannot bring back what the service dropped
    expect(healed.stdout).toContain(`${ghost}: missing at source`);
    const { rows } = await h.runtime.pool.query(
      `SELECT amount::text, missing_at_source_since FROM reporting.payments WHERE id = $1`,
      [ghost],
    );
    expect(rows).toHaveLength(1); // kept
    expect(rows[0].amount).toBe('1234.50');
    expect(rows[0].missing_at_source_since).toBeInstanceOf(Date);

    const pack = await exportDay(h.runtime, day, { now: h.sim.now() });
    const differences = csvObjects(await readFile(join(pack.dir, 'differences.csv'), 'utf8'));
    expect(differences.map((d) => [d.id, d.difference, d.warehouse_amount])).toEqual([
      [ghost, 'missing_at_source', '1234.50'],
    ]);
    expect((await manifestOf(day)).reconcile?.records).toEqual({ missing_at_source: 1 });
    expect(pack.state).toBe('provisional');
  });
});

describe("the worker's daily job", () => {
  it('heals a day with a difference before publishing it, and the manifest records that reconcile', async () => {
    const day = dayAgo(1);
    const { lost, stale } = await damage(day);
    const report = await runDailyExport(h.runtime, h.sim.now());
    expect(report.yesterday?.day).toBe(day);
    // the warehouse equals the simulator (but for the record the service dropped, kept on purpose)
    expect(await paymentDifferences(h)).toEqual(['extra ghost_payment_1 not in the service']);
    const m = await manifestOf(day);
    expect(m.reconcile).toMatchObject({ mismatches: 0, records: {} });
    const runs = await h.runtime.pool.query(
      `SELECT max(checked_at) AS at FROM reporting.reconcile_results WHERE day = $1`,
      [day],
    );
    expect(m.reconcile?.checkedAt).toBe((runs.rows[0].at as Date).toISOString()); // the last run, after healing
    const before = await h.runtime.pool.query(
      `SELECT DISTINCT record_id FROM reporting.reconcile_records WHERE day = $1 AND kind <> 'quarantined'`,
      [day],
    );
    expect(before.rows.map((r) => r.record_id)).toEqual(expect.arrayContaining([...lost, stale])); // it was seen
    expect(m.files.differences).toBeUndefined();
  });
});

describe('one reconcile per day, and an unreachable service', () => {
  it('a second reconcile of the day waits for the first (the lease), then runs', async () => {
    const day = dayAgo(1);
    await h.runtime.pool.query(
      `INSERT INTO reporting.reconcile_leases (day, holder, expires_at) VALUES ($1, 'other-worker', now() + interval '1 hour')`,
      [day],
    );
    const runsBefore = await countRuns(day);
    let waitingFor = '';
    let released!: () => void;
    const waiting = new Promise<void>((r) => (released = r));
    const second = reconcileDay(h.runtime, day, {
      pollMs: 20,
      onWait: (holder) => {
        waitingFor = holder;
        released();
      },
    });
    await waiting; // the lease is held: the second one reports it waits, and has recorded nothing
    expect(waitingFor).toBe('other-worker');
    expect(await countRuns(day)).toBe(runsBefore);
    await h.runtime.pool.query(`DELETE FROM reporting.reconcile_leases WHERE day = $1`, [day]);
    expect((await second).mismatches).toBe(0);
    expect(await countRuns(day)).toBe(runsBefore + 1);
    const left = await h.runtime.pool.query(`SELECT count(*)::int AS n FROM reporting.reconcile_leases`);
    expect(left.rows[0].n).toBe(0); // released
  });

  it('a service that cannot be reached is said so: nothing recorded, no difference reported', async () => {
    const day = dayAgo(1);
    const runsBefore = await countRuns(day);
    h.sim.setSwitches({ serverErrorRate: 1 });
    try {
      await expect(reconcileDay(h.runtime, day)).rejects.toBeInstanceOf(ReconcileUnreachableError);
      // the daily job: yesterday is not published on a reconcile that could not run; it asks to run later
      const justAfter = new Date(dayWindow(day, ZONE).end.getTime() + 3_600_000);
      const daily = await runDailyExport(h.runtime, justAfter);
      expect(daily.yesterday).toBeNull();
      expect(daily.retryAt!.getTime()).toBeGreaterThan(justAfter.getTime());
      const cli = await runCli(['reconcile', '--day', day], harnessEnv(h, { UPSTREAM_RETRIES: '0' }));
      expect(cli.status).toBe(1);
      expect(cli.stderr).toMatch(/could not reach the service of source default to reconcile .*retry later/);
      expect(cli.stdout).toBe('');
    } finally {
      h.sim.setSwitches({ serverErrorRate: 0 });
    }
    expect(await countRuns(day)).toBe(runsBefore);
  });
});

async function countRuns(day: string): Promise<number> {
  const { rows } = await h.runtime.pool.query(
    `SELECT count(DISTINCT run_id)::int AS n FROM reporting.reconcile_results WHERE day = $1`,
    [day],
  );
  return rows[0].n;
}
