/**
 * Starts a BullMQ worker on the shared queue with the sync processor, registers the schedules, and keeps
 * the queue filled from PostgreSQL (jobs/refill.ts). Used by `paysync worker`, the demo, and tests that
 * need real workers. `close()` drains: running jobs finish, no new ones are taken, and every Redis
 * connection it opened is closed.
 */
import { Worker, type MinimalJob } from 'bullmq';
import type { Redis } from 'ioredis';
import { connectRedis, type Runtime } from '../src/runtime.js';
import type { WindowReport } from '../src/sync/context.js';
import { Permits } from '../src/sync/permits.js';
import { jobsToFill, MAX_JOBS } from '../src/sync/request-pacer.js';
import { tracing } from '../src/telemetry/tracing.js';
import { jobRetryDelay } from '../src/upstream/retry-delay.js';
import { createQueue, QUEUE_NAME, type SyncJobData, type SyncQueue } from './queue.js';
import { startRefiller, type Refiller } from './refill.js';
import { registerSchedules } from './schedules.js';
import { createSyncProcessor, NotAdmitted } from './sync-processor.js';

export interface RunningWorker {
  worker: Worker<SyncJobData>;
  queue: SyncQueue;
  schedules: string[];
  refiller: Refiller;
  close(): Promise<void>;
}

export interface StartWorkerOptions {
  concurrency?: number;
  schedules?: boolean;
  onWindow?: (report: WindowReport) => void;
  /** The re-fill's full pass and sentinel check periods (defaults 60 s and 2 s). */
  refillEveryMs?: number;
  sentinelEveryMs?: number;
}

/**
 * A killed worker's job is taken over when its lock expires ("stalled") and run again, however often
 * that happens: a stall says the worker died, not that the job is wrong. BullMQ would fail a job after
 * `maxStalledCount` stalls; this keeps it retrying (PostgreSQL counts the runs of a backfill item).
 */
const MAX_STALLED = 1_000_000;

/** The job-level backoff: exponential from the job's `backoff.delay`, never under a 429's Retry-After. */
export function backoffStrategy(
  attemptsMade: number,
  _type?: string,
  error?: Error,
  job?: MinimalJob,
): number {
  const backoff = job?.opts.backoff;
  const baseMs = typeof backoff === 'object' ? (backoff.delay ?? 2_000) : (backoff ?? 2_000);
  const retryAfterMs = (error as { retryAfterMs?: unknown } | undefined)?.retryAfterMs;
  return jobRetryDelay(attemptsMade, typeof retryAfterMs === 'number' ? retryAfterMs : undefined, baseMs);
}

/** How often the admission looks again at the sources' in-flight limits (they change with each answer). */
const ADMISSION_EVERY_MS = 250;

/**
 * Backfill items run as many at once as the sources' in-flight limits need (jobsToFill: several windows
 * and days when the service is slow), never fewer than `configured`. BullMQ fixes a worker's concurrency
 * for as long as its jobs run, so the worker takes up to MAX_JOBS jobs off the queue and the items among
 * them wait here for their turn; on close the waiting ones go back to the queue (sync-processor.ts).
 */
function backfillAdmission(
  runtime: Runtime,
  configured: number,
): { permits: Permits; timer: NodeJS.Timeout } {
  const permits = new Permits(() => jobsToFill(runtime.pacers().values(), configured));
  const timer = setInterval(() => permits.wake(), ADMISSION_EVERY_MS);
  timer.unref();
  return { permits, timer };
}

export async function startWorker(
  runtime: Runtime,
  options: StartWorkerOptions = {},
): Promise<RunningWorker> {
  const { settings, log } = runtime;
  const connections: Redis[] = [
    await connectRedis(settings.REDIS_URL, 'paysync-worker-queue'),
    await connectRedis(settings.REDIS_URL, 'paysync-worker-blocking'),
  ];
  const queue = createQueue(connections[0] as Redis, settings.PAYSYNC_QUEUE_PREFIX);
  const withSchedules = options.schedules !== false;
  const schedules = withSchedules ? await registerSchedules(queue, settings) : [];
  const configured = options.concurrency ?? settings.WORKER_CONCURRENCY;
  const admission = backfillAdmission(runtime, configured);
  const admit = () => admission.permits.take();
  // With tracing on, BullMQ's telemetry hook makes one span per job processed (src/telemetry/otel.ts).
  const telemetry = tracing()?.workerTelemetry();
  const worker = new Worker<SyncJobData>(QUEUE_NAME, createSyncProcessor(runtime, options.onWindow, admit), {
    ...(telemetry ? { telemetry } : {}),
    connection: connections[1] as Redis,
    prefix: settings.PAYSYNC_QUEUE_PREFIX,
    concurrency: Math.max(configured, MAX_JOBS),
    lockDuration: settings.JOB_LOCK,
    stalledInterval: settings.JOB_LOCK,
    maxStalledCount: MAX_STALLED,
    settings: { backoffStrategy },
  });
  worker.on('failed', (job, error) =>
    log.warn({ job: job?.id, name: job?.name, error: error.message }, 'job failed'),
  );
  worker.on('error', (error) => log.error({ error: error.message }, 'worker error'));
  await worker.waitUntilReady();
  const refiller = startRefiller({
    queue,
    redis: connections[0] as Redis,
    pool: runtime.pool,
    settings,
    log,
    schedules: withSchedules,
    ...(options.refillEveryMs ? { everyMs: options.refillEveryMs } : {}),
    ...(options.sentinelEveryMs ? { sentinelEveryMs: options.sentinelEveryMs } : {}),
  });
  await refiller.runNow('worker start');
  return {
    worker,
    queue,
    schedules,
    refiller,
    async close() {
      clearInterval(admission.timer);
      admission.permits.close(new NotAdmitted('the worker is closing'));
      await refiller.stop();
      await worker.close();
      await queue.close();
      await Promise.allSettled(connections.map((c) => c.quit()));
    },
  };
}
