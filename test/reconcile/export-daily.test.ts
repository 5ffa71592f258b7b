/** The daily pack job: registered at EXPORT_AT in REPORT_TIMEZONE; writes yesterday, restates changed days. */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { rm } from 'node:fs/promises';
import { createQueue, EXPORT_SCHEDULER_ID } from '../../jobs/queue.js';
import { exportCron, registerSchedules } from '../../jobs/schedules.js';
import { createSyncProcessor } from '../../jobs/sync-processor.js';
import { exportDay } from '../../src/reconcile/export-day.js';
import { runDailyExport } from '../../src/reconcile/daily-export.js';
import { dayWindow, localDayOf } from '../../src/sync/windows.js';
import { syncAll, tempExportDir } from '../helpers/export.js';
import { middayBefore, startHarness, type Harness } from '../helpers/sync-harness.js';
import type { Job } from 'bullmq';
import type { SyncJobData } from '../../jobs/queue.js';

const ZONE = 'Africa/Porto-Novo';
let h: Harness;
let exportDir: string;

beforeAll(async () => {
  exportDir = await tempExportDir();
  h = await startHarness({
    name: 'export-daily',
    sim: { days: 3, perDay: 60, now: middayBefore(ZONE) }, // yesterday over and settled at any hour
    env: { REPORT_TIMEZONE: ZONE, EXPORT_DIR: exportDir, EXPORT_AT: '02:30', PAGE_SIZE: '100' },
  });
  await syncAll(h);
});

afterAll(async () => {
  await h?.close();
  await rm(exportDir, { recursive: true, force: true });
});

describe('the daily export job', () => {
  it('is scheduled at EXPORT_AT in REPORT_TIMEZONE, once however many workers register it', async () => {
    expect(exportCron('02:30')).toBe('30 2 * * *');
    const queue = createQueue(h.runtime.redis, h.prefix);
    try {
      await registerSchedules(queue, h.settings);
      await registerSchedules(queue, h.settings);
      const scheduler = await queue.getJobScheduler(EXPORT_SCHEDULER_ID);
      expect(scheduler).toMatchObject({ name: 'export', pattern: '30 2 * * *', tz: ZONE });
      const all = await queue.getJobSchedulers();
      expect(all.filter((s) => s.name === 'export')).toHaveLength(1);
    } finally {
      await queue.close();
    }
  });

  it("writes yesterday's pack, then restates only the earlier days whose records changed", async () => {
    const now = h.sim.now();
    const dayAgo = (n: number) => localDayOf(new Date(now.getTime() - n * 86_400_000), ZONE);
    const older = await exportDay(h.runtime, dayAgo(2));
    const untouched = await exportDay(h.runtime, dayAgo(3));
    expect([older.version, untouched.version]).toEqual([1, 1]);
    const w = dayWindow(dayAgo(2), ZONE);
    await h.runtime.pool.query(
      `UPDATE reporting.payments SET amount = amount + 0.01, updated_at = updated_at + interval '1 second'
        WHERE id = (SELECT id FROM reporting.payments WHERE created_at >= $1 AND created_at < $2 LIMIT 1)`,
      [w.start, w.end],
    );
    const report = await runDailyExport(h.runtime, now);
    expect(report.yesterday).toMatchObject({ day: dayAgo(1), version: 1, unchanged: false });
    expect(report.restated.map((r) => [r.day, r.version])).toEqual([[dayAgo(2), 2]]);
    // through the BullMQ processor: nothing changed since, so nothing new is written
    const processor = createSyncProcessor(h.runtime);
    const result = await processor({ name: 'export', data: { kind: 'daily-export' } } as Job<SyncJobData>);
    expect(result).toMatchObject({ restated: [] });
  });
});
