/**
 * The repeating schedules: one live tick per source × stream every SYNC_EVERY. Upserting a scheduler with
 * the same id replaces it, so every worker can register them at start without creating duplicates.
 */
import type { Queue } from 'bullmq';
import type { Settings } from '../src/config/settings.js';
import { STREAMS } from '../src/upstream/schemas.js';
import { PRIORITY, tickSchedulerId, type SyncJobData } from './queue.js';

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
  return ids;
}
