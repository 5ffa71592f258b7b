/**
 * Backfill items on the queue. `enqueueBackfill` adds each planned item as a job with a deterministic id
 * (under its backfill's id when the backfill is recorded in PostgreSQL): an item already waiting or
 * running is left as it is, a finished one is replaced. `queueProgress` is the Redis view of a
 * plan that was never recorded (tests, bench, demo); a recorded backfill's progress is read from
 * PostgreSQL (src/warehouse/backfill-store.ts), which survives Redis.
 */
import type { Job } from 'bullmq';
import type { PlannedJob } from '../src/sync/backfill.js';
import type { BackfillWork } from '../src/sync/work.js';
import { addWork, backfillJobId, PRIORITY, RETRY, type SyncJobData, type SyncQueue } from './queue.js';

export interface QueueItem {
  key: string;
  name: 'window' | 'scan';
  data: BackfillWork;
}

const OPEN_STATES = new Set(['waiting', 'active', 'delayed', 'prioritized', 'waiting-children']);

/** Adds one item's job unless it is queued or running already; true when it was added. */
export async function ensureItemQueued(queue: SyncQueue, item: QueueItem): Promise<boolean> {
  const jobId = backfillJobId(item.key, item.data.backfillId);
  const existing: Job<SyncJobData> | undefined = await queue.getJob(jobId);
  if (existing) {
    if (OPEN_STATES.has(await existing.getState())) return false;
    await existing.remove().catch(() => undefined); // a finished run of the same item: replace it
  }
  const opts = { jobId, priority: PRIORITY.backfill, ...RETRY };
  if (item.data.stream === 'payments') await addWork(queue, 'window', item.data, opts);
  else await addWork(queue, 'scan', item.data, opts);
  return true;
}

/**
 * Queues planned items (of backfill `backfillId` when it is recorded in PostgreSQL; `trace`: the
 * traceparent recorded with it, which each item's span links to).
 */
export async function enqueueBackfill(
  queue: SyncQueue,
  jobs: readonly PlannedJob[],
  backfillId?: number,
  trace?: string | null,
): Promise<{ added: number; alreadyQueued: number }> {
  let added = 0;
  for (const planned of jobs) {
    const data =
      backfillId === undefined ? planned.data : { ...planned.data, backfillId, ...(trace ? { trace } : {}) };
    if (await ensureItemQueued(queue, { key: planned.id, name: planned.name, data })) added += 1;
  }
  return { added, alreadyQueued: jobs.length - added };
}

export interface BackfillProgress {
  total: number;
  done: number;
  failed: Array<{ id: string; reason: string }>;
  records: number;
}

/** The Redis view of a plan that is not recorded in PostgreSQL: completed and failed jobs. */
export async function backfillProgress(
  queue: SyncQueue,
  jobs: readonly PlannedJob[],
): Promise<BackfillProgress> {
  const progress: BackfillProgress = { total: jobs.length, done: 0, failed: [], records: 0 };
  for (const planned of jobs) {
    const job = await queue.getJob(planned.id);
    if (!job) continue;
    const state = await job.getState();
    if (state === 'completed') {
      progress.done += 1;
      progress.records += Number((job.returnvalue as { records?: number } | null)?.records ?? 0);
    } else if (state === 'failed') {
      progress.failed.push({ id: planned.label, reason: job.failedReason ?? 'failed' });
    }
  }
  return progress;
}
