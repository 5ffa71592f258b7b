/**
 * The daily packs as /metrics serves them for the alerts on a day that stays incomplete or cannot be
 * exported (ops/alerts.yml, whose rules promtool tests on these series in ops/alerts.test.yml): read from
 * PostgreSQL at each scrape, so every worker serves the same and a restart forgets nothing.
 * - `packDueAt`/`daysDue`: a day's pack is due at EXPORT_AT on the next day or EXPORT_GRACE after the day
 *   ended, whichever is later; only days that ended after paysync first read anything, and not before
 *   SYNC_START, are due.
 * - A worker's /metrics: paysync_export_incomplete 1 for the day published incomplete, 0 for a complete
 *   one; paysync_export_missing 1 for the due day without a pack and no series for the others.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DateTime } from 'luxon';
import { daysDue, packDueAt } from '../../src/ops/export-state.js';
import { exportDay } from '../../src/reconcile/export-day.js';
import { dayWindow } from '../../src/sync/windows.js';
import { httpGet, sample, startOpsStack, type OpsStack } from '../helpers/ops.js';
import { middayBefore, startHarness, syncAll, type Harness } from '../helpers/sync-harness.js';

const settings = { REPORT_TIMEZONE: 'Africa/Abidjan', EXPORT_AT: '02:00', SYNC_START: '2026-03-01' };

describe('when a pack is due', () => {
  it('at EXPORT_AT the next day or EXPORT_GRACE after the day ended, whichever is later', () => {
    expect(packDueAt('2026-03-10', 'UTC', '02:00').toISOString()).toBe('2026-03-11T06:00:00.000Z');
    expect(packDueAt('2026-03-10', 'UTC', '09:30').toISOString()).toBe('2026-03-11T09:30:00.000Z');
    // a zone east of UTC: the local day ends at 23:00 UTC the day before
    expect(packDueAt('2026-03-10', 'Europe/Paris', '08:00').toISOString()).toBe('2026-03-11T07:00:00.000Z');
  });

  it('only days that ended after paysync first ran, from SYNC_START, once due', () => {
    const now = new Date('2026-03-12T07:00:00Z');
    const firstRunAt = new Date('2026-03-09T12:00:00Z');
    const due = (over: Partial<Parameters<typeof daysDue>[0]> = {}) =>
      daysDue({ now, settings, firstRunAt, keepDays: 14, ...over });
    expect(due()).toEqual(['2026-03-09', '2026-03-10', '2026-03-11']);
    expect(due({ now: new Date('2026-03-12T05:59:00Z') })).toEqual(['2026-03-09', '2026-03-10']);
    expect(due({ firstRunAt: null })).toEqual([]); // never ran: nothing was to be exported
    expect(due({ settings: { ...settings, SYNC_START: '2026-03-11' } })).toEqual(['2026-03-11']);
    expect(due({ firstRunAt: new Date('2026-01-01T00:00:00Z'), keepDays: 2 })).toEqual([
      '2026-03-10',
      '2026-03-11',
    ]);
  });
});

describe('a worker serves the packs of the recent days from PostgreSQL', () => {
  let h: Harness;
  let stack: OpsStack;
  let exportDir: string;
  beforeAll(async () => {
    exportDir = await mkdtemp(join(tmpdir(), 'paysync-export-alerts-'));
    h = await startHarness({
      name: 'exportalerts',
      sim: { days: 4, perDay: 20, now: middayBefore('UTC') },
      env: { EXPORT_DIR: exportDir, METRICS_PORT: '0' },
    });
    stack = await startOpsStack(h);
  });
  afterAll(async () => {
    await stack?.close();
    await h?.close();
    await rm(exportDir, { recursive: true, force: true });
  });

  it('one day published incomplete, one complete, one due without a pack', async () => {
    await syncAll(h);
    const day = (n: number) =>
      DateTime.fromJSDate(h.sim.now(), { zone: 'UTC' }).minus({ days: n }).toISODate()!;
    // paysync has run for three days: the three days before today are due (today is over at 06:00 tomorrow)
    await h.runtime.pool.query(
      `UPDATE reporting.sync_windows SET first_fetched_at = first_fetched_at - interval '3 days'`,
    );
    // day-3's payments were never read completely: its pack can only be published incomplete
    const gap = dayWindow(day(3), 'UTC');
    await h.runtime.pool.query(
      `DELETE FROM reporting.sync_windows WHERE stream = 'payments' AND window_start < $2 AND window_end > $1`,
      [gap.start, gap.end],
    );
    const now = h.sim.now();
    expect((await exportDay(h.runtime, day(3), { now, allowIncomplete: true })).state).toBe('incomplete');
    expect((await exportDay(h.runtime, day(1), { now })).state).not.toBe('incomplete');

    const { status, text } = await httpGet(`${stack.ops.metricsUrl}/metrics`);
    expect(status).toBe(200);
    expect(sample(text, 'paysync_status_scrape_error')).toBe(0);
    expect(sample(text, 'paysync_export_incomplete', { day: day(3) })).toBe(1);
    expect(sample(text, 'paysync_export_incomplete', { day: day(1) })).toBe(0);
    const missing = [...text.matchAll(/^paysync_export_missing\{day="([^"]+)"\} 1$/gm)].map((m) => m[1]);
    expect(missing).toEqual([day(2)]);

    // written late: the next scrape no longer counts it missing
    await exportDay(h.runtime, day(2), { now });
    const after = await httpGet(`${stack.ops.metricsUrl}/metrics`);
    expect(after.text).not.toMatch(/^paysync_export_missing\{/m);
  });
});
