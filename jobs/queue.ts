/**
 * The BullMQ queue every paysync process shares (one per PAYSYNC_QUEUE_PREFIX), its job shapes and ids.
 * Job data holds source names and windows, never keys: the worker looks the source up in its own settings.
 */
import { Queue, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Stream } from '../src/upstream/schemas.js';

export const QUEUE_NAME = 'sync';

export interface TickJob {
  source: string;
  stream: Stream;
}

export interface WindowJob {
  source: string;
  stream: 'payments';
  /** Window bounds, epoch milliseconds. */
  start: number;
  end: number;
  kind: 'backfill';
}

export interface ScanJob {
  source: string;
  stream: 'transfers';
  kind: 'backfill';
}

/** The daily pack (job name 'export'): yesterday's, plus restatements of changed days in the horizon. */
export interface ExportJob {
  kind: 'daily-export';
}

/** A probe of a source's open points (job name 'probe'): at worker start and daily. */
export interface ProbeJob {
  source: string;
  kind: 'probe';
}

export type SyncJobData = TickJob | WindowJob | ScanJob | ExportJob | ProbeJob;

/** Live ticks outrank backfill windows: BullMQ runs lower numbers first. */
export const PRIORITY = { tick: 1, export: 2, probe: 3, backfill: 10 } as const;

/** Retries for what can heal (429, 5xx, network, a shifting list); unrecoverable errors skip them. */
export const RETRY: Pick<JobsOptions, 'attempts' | 'backoff'> = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 2_000 },
};

/** Deterministic id of a window job: a window already queued or running is not queued twice. */
export function windowJobId(source: string, start: number, end: number): string {
  return `window|${source}|payments|${start}|${end}`;
}

export function scanJobId(source: string): string {
  return `scan|${source}|transfers`;
}

export function tickSchedulerId(source: string, stream: Stream): string {
  return `tick|${source}|${stream}`;
}

export const EXPORT_SCHEDULER_ID = 'export|daily';

export function probeSchedulerId(source: string): string {
  return `probe|${source}|daily`;
}

export function createQueue(connection: Redis, prefix: string): Queue<SyncJobData> {
  return new Queue<SyncJobData>(QUEUE_NAME, {
    connection,
    prefix,
    defaultJobOptions: {
      removeOnComplete: { age: 24 * 3600, count: 10_000 },
      removeOnFail: { age: 7 * 24 * 3600 },
    },
  });
}
