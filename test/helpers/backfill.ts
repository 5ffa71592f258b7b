import type { Queue } from 'bullmq';
import type { PlannedJob } from '../../src/sync/backfill.js';
import { backfillProgress, type BackfillProgress } from '../../jobs/backfill-queue.js';
import { localDayOf } from '../../src/sync/windows.js';
import type { SyncJobData } from '../../jobs/queue.js';
import type { Harness } from './sync-harness.js';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls until every planned job is completed or failed. */
export async function waitForBackfill(
  queue: Queue<SyncJobData>,
  jobs: readonly PlannedJob[],
  timeoutMs = 60_000,
): Promise<BackfillProgress> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const p = await backfillProgress(queue, jobs);
    if (p.done + p.failed.length >= p.total) return p;
    if (Date.now() > deadline)
      throw new Error(`backfill not finished after ${timeoutMs} ms: ${JSON.stringify(p)}`);
    await sleep(200);
  }
}

/** A day range covering all of the simulator's history: its days plus one before, up to today. */
export function backfillDays(harness: Harness, days = 6): [string, string] {
  const now = harness.sim.now().getTime();
  return [
    localDayOf(new Date(now - days * 86_400_000), 'UTC'),
    localDayOf(new Date(now), 'UTC'), // today: a later --to is clamped to today by the CLI
  ];
}
