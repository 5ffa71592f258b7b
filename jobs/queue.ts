/**
 * The BullMQ queue every paysync process shares (one per PAYSYNC_QUEUE_PREFIX), its job names and ids.
 * What each job name carries is `WorkByName` (src/sync/work.ts); this file only ties it to BullMQ.
 */
import { Queue, type Job, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Stream } from '../src/upstream/schemas.js';
import type { BackfillWork, WorkByName, WorkName } from '../src/sync/work.js';
import { scanItemKey, windowItemKey } from '../src/sync/work.js';

export type { WorkByName, WorkName } from '../src/sync/work.js';
export type TickJob = WorkByName['tick'];
export type WindowJob = WorkByName['window'];
export type ScanJob = WorkByName['scan'];
export type ExportJob = WorkByName['export'];
export type ProbeJob = WorkByName['probe'];
export type SyncJobData = WorkByName[WorkName];

/** A job whose name tells its data's type (narrow on `job.name`). */
export type SyncJob = { [N in WorkName]: Job<WorkByName[N], unknown, N> }[WorkName];

export const QUEUE_NAME = 'sync';

/** Live ticks outrank backfill windows: BullMQ runs lower numbers first. */
export const PRIORITY = { tick: 1, export: 2, probe: 3, backfill: 10 } as const;

/** The backoff strategy's name (jobs/start-worker.ts): exponential, never shorter than a 429's Retry-After. */
export const BACKOFF_TYPE = 'paysync';

/** Retries for what can heal (429, 5xx, network, a shifting list); what cannot heal skips them. */
export const RETRY: Pick<JobsOptions, 'attempts' | 'backoff'> = {
  attempts: 5,
  backoff: { type: BACKOFF_TYPE, delay: 2_000 },
};

/** Deterministic id of a window job: a window already queued or running is not queued twice. */
export function windowJobId(source: string, start: number, end: number): string {
  return windowItemKey(source, start, end);
}

export function scanJobId(source: string): string {
  return scanItemKey(source);
}

/**
 * The job id of a backfill item: its key, under its backfill's id when the backfill is recorded in
 * PostgreSQL (so a later backfill of the same range runs again, and a re-queue of the same one does not).
 */
export function backfillJobId(key: string, backfillId?: number): string {
  return backfillId === undefined ? key : `backfill|${backfillId}|${key}`;
}

/** The job id of a backfill item from its data. */
export function jobIdOf(work: BackfillWork): string {
  const key =
    work.stream === 'payments' ? windowItemKey(work.source, work.start, work.end) : scanItemKey(work.source);
  return backfillJobId(key, work.backfillId);
}

export function tickSchedulerId(source: string, stream: Stream): string {
  return `tick|${source}|${stream}`;
}

export const EXPORT_SCHEDULER_ID = 'export|daily';

export function probeSchedulerId(source: string): string {
  return `probe|${source}|daily`;
}

export type SyncQueue = Queue<SyncJobData>;

/** Adds a job whose data is checked against its name. */
export function addWork<N extends WorkName>(
  queue: SyncQueue,
  name: N,
  data: WorkByName[N],
  opts: JobsOptions,
): Promise<Job<SyncJobData>> {
  return queue.add(name, data, opts);
}

export function createQueue(connection: Redis, prefix: string): SyncQueue {
  return new Queue<SyncJobData>(QUEUE_NAME, {
    connection,
    prefix,
    defaultJobOptions: {
      removeOnComplete: { age: 24 * 3600, count: 10_000 },
      removeOnFail: { age: 7 * 24 * 3600 },
    },
  });
}
