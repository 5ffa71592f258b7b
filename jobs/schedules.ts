/**
 * The repeating schedules: one live tick per source × stream every SYNC_EVERY, and the daily pack at
 * EXPORT_AT in REPORT_TIMEZONE (a cron pattern with BullMQ's `tz`, so the hour follows the zone's DST).
 * Upserting a scheduler with the same id replaces it, so every worker can register them at start without
 * creating duplicates.
 */
import type { Queue } from 'bullmq';
import type { Settings } from '../src/config/settings.js';
import { STREAMS } from '../src/upstream/schemas.js';
import { EXPORT_SCHEDULER_ID, PRIORITY, RETRY, tickSchedulerId, type SyncJobData } from './queue.js';

export async function registerSchedules(queue: Queue<SyncJobData>, settings: Settings): Promise<string[]> {
  const ids: string[] = [];
  for (const source of settings.sources) {
    for (const stream of STREAMS) {
      const id = tickSchedulerId(source.name, stream);
      await queue.upsertJobScheduler(
        id,
        { every: settings.SYNC_EVERY },
        {
          name: 'tick',
          data: { source: source.name, stream },
          opts: { priority: PRIORITY.tick, attempts: 1 },
        },
      );
      ids.push(id);
    }
  }
  await registerExportSchedule(queue, settings);
  ids.push(EXPORT_SCHEDULER_ID);
  return ids;
}

/** `EXPORT_AT` (HH:MM) as a daily cron pattern: minute hour * * *. */
export function exportCron(exportAt: string): string {
  const [hour, minute] = exportAt.split(':').map(Number);
  return `${minute} ${hour} * * *`;
}

async function registerExportSchedule(queue: Queue<SyncJobData>, settings: Settings): Promise<void> {
  await queue.upsertJobScheduler(
    EXPORT_SCHEDULER_ID,
    { pattern: exportCron(settings.EXPORT_AT), tz: settings.REPORT_TIMEZONE },
    {
      name: 'export',
      data: { kind: 'daily-export' },
      // An export is idempotent (an unchanged day writes nothing), so retrying what can heal is safe.
      opts: { priority: PRIORITY.export, ...RETRY },
    },
  );
}
