/**
 * A pack is final only when it is: a future day is a usage error; a past day sync does not cover is
 * refused with the backfill to run, or published `incomplete` when asked; a covered, settled and cleanly
 * reconciled day is `final`. The daily job waits for sync to cover yesterday, then after the grace period
 * publishes it `incomplete` with a warning. And `status` on a database that is missing or not migrated
 * says so and exits 2 rather than reporting a healthy nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import pg from 'pg';
import { createLogger } from '../../src/log.js';
import { EXPORT_GRACE_MS, runDailyExport } from '../../src/reconcile/daily-export.js';
import { exportDay } from '../../src/reconcile/export-day.js';
import type { Manifest } from '../../src/reconcile/manifest.js';
import { reconcileDay } from '../../src/reconcile/reconcile.js';
import { dayWindow, localDayOf } from '../../src/sync/windows.js';
import { harnessEnv, runCli } from '../helpers/cli-run.js';
import { syncAll, tempExportDir } from '../helpers/export.js';
import { SERVER_URL, uniqueName, urlFor } from '../helpers/db.js';
import { middayBefore, startHarness, type Harness } from '../helpers/sync-harness.js';

const ZONE = 'Africa/Porto-Novo';
const DAY_MS = 86_400_000;
let h: Harness;
let exportDir: string;
const dayAgo = (n: number) => localDayOf(new Date(h.sim.now().getTime() - n * DAY_MS), ZONE);

beforeAll(async () => {
  exportDir = await tempExportDir();
  h = await startHarness({
    name: 'export-finality',
    sim: { days: 3, perDay: 60, now: middayBefore(ZONE) }, // yesterday over and settled at any hour
    env: { REPORT_TIMEZONE: ZONE, EXPORT_DIR: exportDir, PAGE_SIZE: '100' },
  });
});

afterAll(async () => {
  await h?.close();
  await rm(exportDir, { recursive: true, force: true });
});

const manifestOf = async (day: string) =>
  JSON.parse(await readFile(join(exportDir, day, 'manifest.json'), 'utf8')) as Manifest;

describe('before sync covers the day', () => {
  it('a future day is a usage error (exit 2) and writes nothing', async () => {
    const future = localDayOf(new Date(Date.now() + 3 * DAY_MS), ZONE);
    const r = await runCli(['export', '--day', future], harnessEnv(h));
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`--day ${future} is in the future`));
    await expect(readFile(join(exportDir, future, 'manifest.json'))).rejects.toThrow();
  });

  it('an uncovered past day exits 1 with the backfill to run; --allow-incomplete publishes it incomplete', async () => {
    const day = dayAgo(1);
    const r = await runCli(['export', '--day', day], harnessEnv(h));
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`not synced yet: run \`paysync backfill --from ${day} --to ${day}\``);
    await expect(readFile(join(exportDir, day, 'manifest.json'))).rejects.toThrow();

    const allowed = await runCli(['export', '--day', day, '--allow-incomplete'], harnessEnv(h));
    expect(allowed.status).toBe(0);
    expect(allowed.stdout).toMatch(/version 1, incomplete \(not covered by sync: default\/payments from /);
    const m = await manifestOf(day);
    expect(m).toMatchObject({ version: 1, state: 'incomplete' });
    expect(m.totals.payments.records).toBe(0);
  });

  it('the daily job waits for coverage, then after the grace period publishes incomplete with a warning', async () => {
    const day = dayAgo(2);
    const { end } = dayWindow(day, ZONE);
    const early = new Date(end.getTime() + 60_000); // the day just ended; yesterday of `early` is `day`
    const waiting = await runDailyExport(h.runtime, early);
    expect(waiting.yesterday).toBeNull();
    expect(waiting.retryAt!.getTime()).toBeGreaterThan(early.getTime());
    expect(waiting.retryAt!.getTime()).toBeLessThanOrEqual(end.getTime() + EXPORT_GRACE_MS);

    const lines: Array<Record<string, unknown>> = [];
    const log = createLogger({
      format: 'json',
      destination: new Writable({
        write(chunk, _e, done) {
          lines.push(
            ...String(chunk)
              .split('\n')
              .filter(Boolean)
              .map((l) => JSON.parse(l)),
          );
          done();
        },
      }),
    });
    const late = new Date(end.getTime() + EXPORT_GRACE_MS + 60_000);
    const report = await runDailyExport({ ...h.runtime, log }, late);
    expect(report).toMatchObject({ retryAt: null, yesterday: { day, state: 'incomplete' } });
    expect(lines.find((l) => String(l.msg).includes('INCOMPLETE'))).toMatchObject({ level: 'warn', day });
  });
});

describe('once sync covers the day', () => {
  it('is provisional until reconciled, final once settled and reconciled with nothing unexplained', async () => {
    await syncAll(h);
    const never = await exportDay(h.runtime, dayAgo(3), { now: h.sim.now() });
    expect(never.state).toBe('provisional');
    // a version's own files never change: they say where the reconcile result will be, not "not yet"
    expect(never.stateReason).toMatch(
      /not reconciled when this version was written \(the day's latest reconcile result: the day's top manifest\.json, `paysync status`, reporting\.reconcile_results\)/,
    );
    expect(never.stateReason).not.toMatch(/not reconciled yet/);

    const day = dayAgo(1);
    const first = await exportDay(h.runtime, day, { now: h.sim.now() });
    expect(first.state).not.toBe('incomplete'); // the earlier incomplete version is restated
    expect(first.version).toBeGreaterThan(1);

    expect((await reconcileDay(h.runtime, day)).mismatches).toBe(0);
    const afterHorizon = new Date(h.sim.now().getTime() + h.settings.SETTLE_HORIZON + 2 * DAY_MS);
    const final = await exportDay(h.runtime, day, { now: afterHorizon });
    expect(final.state).toBe('final');
    expect(final.stateReason).toMatch(/covered by sync, .*reconciled with no unexplained difference/);
    const m = await manifestOf(day);
    expect(m).toMatchObject({ state: 'final', version: final.version });
    const ledger = await h.runtime.pool.query(
      `SELECT state, final FROM reporting.export_versions WHERE day = $1 ORDER BY version`,
      [day],
    );
    expect(ledger.rows.at(0)).toEqual({ state: 'incomplete', final: false });
    expect(ledger.rows.at(-1)).toEqual({ state: 'final', final: true });
  });
});

describe('status tells the truth about itself', () => {
  it('a database that does not exist: exit 2, says to run migrate', async () => {
    const missing = urlFor(uniqueName('status_missing'));
    const r = await runCli(['status'], harnessEnv(h, { DATABASE_URL: missing }));
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/does not exist: run `paysync migrate`/);
  });

  it('a database never migrated: exit 2, says to run migrate', async () => {
    const name = uniqueName('status_empty');
    const admin = new pg.Client({ connectionString: SERVER_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    try {
      const r = await runCli(['status'], harnessEnv(h, { DATABASE_URL: urlFor(name) }));
      expect(r.status).toBe(2);
      expect(r.stderr).toMatch(/not migrated .*run `paysync migrate`/);
    } finally {
      await admin.query(`DROP DATABASE ${name} WITH (FORCE)`);
      await admin.end();
    }
  });

  it('a migrated, synced database: the exit code follows the listed reasons', async () => {
    const r = await runCli(['status'], harnessEnv(h));
    expect(r.stdout).toContain('last reconcile per day');
    expect(r.stdout).toMatch(new RegExp(`${dayAgo(1)} default/payments: .*quarantined 0: match`));
    const json = await runCli(['status', '--json'], harnessEnv(h));
    const body = JSON.parse(json.stdout) as { attention: string[] };
    expect([r.status, json.status]).toEqual(body.attention.length > 0 ? [1, 1] : [0, 0]);
    if (r.status === 0) expect(r.stdout).toMatch(/\nhealthy\n/);
    else expect(r.stdout).toMatch(/needs attention:\n {2}\S/);
  });
});
