/**
 * The repeating schedules: one live tick per source × stream every SYNC_EVERY, the daily pack at EXPORT_AT
 * in REPORT_TIMEZONE (a cron pattern with BullMQ's `tz`, so the hour follows the zone's DST), and a daily
 * probe per source. They are data derived from the settings: upserting a scheduler with the same id
 * replaces it, so every worker registers them at start without creating duplicates, and the re-fill
 * (jobs/refill.ts) puts back any that Redis lost.
 */
import type { JobSchedulerTemplateOptions, Queue, RepeatOptions } from 'bullmq';
import type { Settings } from '../src/config/settings.js';
import { STREAMS } from '../src/upstream/schemas.js';
import {
  EXPORT_SCHEDULER_ID,
  PRIORITY,
  RETRY,
  probeSchedulerId,
  tickSchedulerId,
  type SyncJobData,
  type WorkName,
} from './queue.js';

interface ScheduleSpec {
  id: string;
  repeat: Omit<RepeatOptions, 'key'>;
  template: { name: WorkName; data: SyncJobData; opts: JobSchedulerTemplateOptions };
}

const DAY_MS = 86_400_000;

/** `EXPORT_AT` (HH:MM) as a daily cron pattern: minute hour * * *. */
export function exportCron(exportAt: string): string {
  const [hour, minute] = exportAt.split(':').map(Number);
  return `${minute} ${hour} * * *`;
}

/** Every schedule the settings call for. */
export function scheduleSpecs(settings: Settings): ScheduleSpec[] {
  const specs: ScheduleSpec[] = [];
  for (const source of settings.sources) {
    for (const stream of STREAMS) {
      specs.push({
        id: tickSchedulerId(source.name, stream),
        repeat: { every: settings.SYNC_EVERY },
        template: {
          name: 'tick',
          data: { source: source.name, stream },
          opts: { priority: PRIORITY.tick, attempts: 1 },
        },
      });
    }
  }
  specs.push({
    id: EXPORT_SCHEDULER_ID,
    repeat: { pattern: exportCron(settings.EXPORT_AT), tz: settings.REPORT_TIMEZONE },
    // An export is idempotent (an unchanged day writes nothing), so retrying what can heal is safe.
    template: {
      name: 'export',
      data: { kind: 'daily-export' },
      opts: { priority: PRIORITY.export, ...RETRY },
    },
  });
  for (const source of settings.sources) {
    specs.push({
      id: probeSchedulerId(source.name),
      repeat: { every: DAY_MS },
      template: {
        name: 'probe',
        data: { source: source.name, kind: 'probe' },
        opts: { priority: PRIORITY.probe, attempts: 2 },
      },
    });
  }
  return specs;
}

/**
 * Registers (upserts) every schedule, and a probe of each source now: a worker start is when a changed
 * service is most likely to matter. The start-up probe's id is per hour, so workers starting together
 * probe once.
 */
export async function registerSchedules(queue: Queue<SyncJobData>, settings: Settings): Promise<string[]> {
  const specs = scheduleSpecs(settings);
  for (const spec of specs) await queue.upsertJobScheduler(spec.id, spec.repeat, spec.template);
  const hour = Math.floor(Date.now() / 3_600_000);
  for (const source of settings.sources) {
    await queue.add(
      'probe',
      { source: source.name, kind: 'probe' },
      { priority: PRIORITY.probe, attempts: 2, jobId: `probe|${source.name}|start|${hour}` },
    );
  }
  return specs.map((s) => s.id);
}

/** Upserts the schedules Redis no longer has (after FLUSHALL or an empty restart); returns their ids. */
export async function ensureSchedules(queue: Queue<SyncJobData>, settings: Settings): Promise<string[]> {
  const present = new Set((await queue.getJobSchedulers(0, -1)).map((s) => s.key));
  const missing = scheduleSpecs(settings).filter((spec) => !present.has(spec.id));
  for (const spec of missing) await queue.upsertJobScheduler(spec.id, spec.repeat, spec.template);
  return missing.map((s) => s.id);
}
