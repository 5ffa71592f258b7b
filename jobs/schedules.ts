/**
 * The repeating schedules: one live tick per source × stream every SYNC_EVERY, and the daily pack at
 * EXPORT_AT in REPORT_TIMEZONE (a cron pattern with BullMQ's `tz`, so the hour follows the zone's DST).
 * Upserting a scheduler with the same id replaces it, so every worker can register them at start without
 * creating duplicates.
 */
import type { Queue } from 'bullmq';
import type { Settings } from '../src/config/settings.js';
import { STREAMS } from '../src/upstream/schemas.js';
import {
  EXPORT_SCHEDULER_ID,
  PRIORITY,
  RETRY,
  probeSchedulerId,
  tickSchedulerId,
  type SyncJobData,
} from './queue.js';

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
  ids.push(...(await registerProbes(queue, settings)));
  return ids;
}

const DAY_MS = 86_400_000;

/**
 * The probe of each source's open points: once now (a worker start is when a changed service is most
 * likely to matter) and then daily. The start-up job's id is per hour, so several workers starting
 * together probe once.
 */
async function registerProbes(queue: Queue<SyncJobData>, settings: Settings): Promise<string[]> {
  const ids: string[] = [];
  const hour = Math.floor(Date.now() / 3_600_000);
  for (const source of settings.sources) {
    const data = { source: source.name, kind: 'probe' as const };
    const opts = { priority: PRIORITY.probe, attempts: 2 };
    await queue.upsertJobScheduler(
      probeSchedulerId(source.name),
      { every: DAY_MS },
      { name: 'probe', data, opts },
    );
    await queue.add('probe', data, { ...opts, jobId: `probe|${source.name}|start|${hour}` });
    ids.push(probeSchedulerId(source.name));
  }
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
