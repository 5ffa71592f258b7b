/**
 * A day the service lists as empty after seven busy days is exported `final` only when two reads at least
 * an hour apart, both after the day ended, found it empty: until then it is provisional and says what it
 * waits for; then the manifest says "empty, confirmed by reads at T1 and T2". The reads are real reads of
 * the simulator by the sync engine, on a clock the test moves.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { DateTime } from 'luxon';
import { exportDay } from '../../src/reconcile/export-day.js';
import type { Manifest } from '../../src/reconcile/manifest.js';
import { reconcileDay } from '../../src/reconcile/reconcile.js';
import { runPaymentsWindow } from '../../src/sync/window-run.js';
import { dayWindow, localDayOf } from '../../src/sync/windows.js';
import { syncAll, tempExportDir } from '../helpers/export.js';
import { middayBefore, startHarness, type Harness } from '../helpers/sync-harness.js';

const ZONE = 'Africa/Porto-Novo';
const MINUTE = 60_000;
let h: Harness;
let exportDir: string;
let empty: string;

const shift = (day: string, days: number) =>
  DateTime.fromISO(day, { zone: ZONE }).plus({ days }).toISODate() as string;

/** `n` settled payments of `day` in the warehouse (days before the simulator's history: busy days). */
async function busyDay(day: string, n: number): Promise<void> {
  const { start } = dayWindow(day, ZONE);
  await h.runtime.pool.query(
    `INSERT INTO reporting.payments (id, reference, amount, description, status, transaction_type, phone,
        service_mobile_code, extra_data, created_at, updated_at, organization_id, api_key_id, source)
     SELECT 'busy_' || $1 || '_' || g, 'R' || g, 100.00, 'x', 'COMPLETE', 'PAYMENT', '+22990000000', 'MTN_BJ',
            '{}'::jsonb, $2::timestamptz + g * interval '1 hour', $2::timestamptz + g * interval '1 hour', 'org', 'k', 'default'
       FROM generate_series(1, $3::int) g`,
    [day, start, n],
  );
}

/** One read of the empty day's payments window by the sync engine, at the simulator's now. */
async function readEmptyDay(): Promise<void> {
  const r = await runPaymentsWindow(
    h.runtime.syncContext(h.settings.sources[0]!),
    dayWindow(empty, ZONE),
    'backfill',
  );
  expect(r).toMatchObject({ outcome: 'complete', records: 0 });
}

beforeAll(async () => {
  exportDir = await tempExportDir();
  h = await startHarness({
    name: 'empty-day',
    sim: { days: 2, perDay: 30, now: middayBefore(ZONE) },
    env: { REPORT_TIMEZONE: ZONE, EXPORT_DIR: exportDir, PAGE_SIZE: '100', SETTLE_HORIZON: '1h' },
  });
  // the simulator's history covers the last two days: the day before them is empty at the service
  empty = shift(localDayOf(h.sim.now(), ZONE), -3);
  for (let i = 1; i <= 7; i++) await busyDay(shift(empty, -i), 12);
  await syncAll(h); // transfers are scanned whole: the empty day is covered for them
}, 60_000);

afterAll(async () => {
  await h?.close();
  await rm(exportDir, { recursive: true, force: true });
});

const manifestOf = async () =>
  JSON.parse(await readFile(join(exportDir, empty, 'manifest.json'), 'utf8')) as Manifest;

describe('an empty day after seven busy ones', () => {
  it('stays provisional until two reads at least an hour apart, after the day ended, find it empty', async () => {
    await readEmptyDay();
    const t1 = h.sim.now().toISOString();
    expect((await reconcileDay(h.runtime, empty)).mismatches).toBe(0);
    const once = await exportDay(h.runtime, empty, { now: h.sim.now() });
    expect(once.state).toBe('provisional');
    expect(once.stateReason).toMatch(
      /default\/payments has no record after 7 days of at least 10: final once two reads at least an hour apart, both after the day ended, find it empty/,
    );

    h.sim.advance(30 * MINUTE); // a second read, but only half an hour later
    await readEmptyDay();
    expect((await exportDay(h.runtime, empty, { now: h.sim.now() })).state).toBe('provisional');

    h.sim.advance(31 * MINUTE);
    await readEmptyDay();
    const t2 = h.sim.now().toISOString();
    const confirmed = await exportDay(h.runtime, empty, { now: h.sim.now() });
    expect(confirmed.state).toBe('final');
    const m = await manifestOf();
    expect(m.emptyConfirmed).toEqual([
      {
        source: 'default',
        stream: 'payments',
        reads: [t1, t2],
        text: `empty, confirmed by reads at ${t1} and ${t2}`,
      },
    ]);
    expect(m.totals.payments.records).toBe(0);
  });

  it('a quiet day after quiet days needs no such evidence', async () => {
    const quiet = shift(empty, -8); // no busy days before it
    await runPaymentsWindow(
      h.runtime.syncContext(h.settings.sources[0]!),
      dayWindow(quiet, ZONE),
      'backfill',
    );
    expect((await reconcileDay(h.runtime, quiet)).mismatches).toBe(0);
    const r = await exportDay(h.runtime, quiet, { now: h.sim.now() });
    expect(r.state).toBe('final');
  });
});
