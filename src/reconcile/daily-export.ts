/**
 * The daily export job (EXPORT_AT in REPORT_TIMEZONE): yesterday's pack, then every earlier day inside
 * SETTLE_HORIZON that already has a pack and whose records changed since its latest version (found in SQL
 * against the version's snapshot, so unchanged days cost one query and write nothing), restated.
 */
import { DateTime } from 'luxon';
import type { Runtime } from '../runtime.js';
import { dayWindow, localDayOf } from '../sync/windows.js';
import { exportDay, type ExportResult } from './export-day.js';
import { changedSinceLastVersion, publishedDaysSince } from './restatement.js';

export interface DailyExportReport {
  yesterday: ExportResult;
  restated: ExportResult[];
}

function shiftDay(day: string, days: number, zone: string): string {
  return DateTime.fromISO(day, { zone }).plus({ days }).toISODate() as string;
}

export async function runDailyExport(runtime: Runtime, now: Date = new Date()): Promise<DailyExportReport> {
  const zone = runtime.settings.REPORT_TIMEZONE;
  const yesterday = shiftDay(localDayOf(now, zone), -1, zone);
  const first = await exportDay(runtime, yesterday, { now });
  const horizonStart = localDayOf(new Date(now.getTime() - runtime.settings.SETTLE_HORIZON), zone);
  const restated: ExportResult[] = [];
  for (const day of await publishedDaysSince(runtime.pool, horizonStart)) {
    if (day === yesterday) continue;
    const w = dayWindow(day, zone);
    if (!(await changedSinceLastVersion(runtime.pool, [w.start, w.end], day))) continue;
    restated.push(await exportDay(runtime, day, { now }));
  }
  return { yesterday: first, restated };
}
