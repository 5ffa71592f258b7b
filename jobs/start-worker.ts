/**
 * Starts a BullMQ worker on the shared queue with the sync processor, and registers the schedules. Used by
 * `paysync worker`, the demo, and tests that need real workers. `close()` drains: running jobs finish,
 * no new ones are taken, and every Redis connection it opened is closed.
 */
import { Worker, type Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { connectRedis, type Runtime } from '../src/runtime.js';
import type { WindowReport } from '../src/sync/context.js';
import { createQueue, QUEUE_NAME, type SyncJobData } from './queue.js';
import { registerSchedules } from './schedules.js';
import { createSyncProcessor } from './sync-processor.js';

export interface RunningWorker {
  worker: Worker<SyncJobData>;
  queue: Queue<SyncJobData>;
  schedules: string[];
  close(): Promise<void>;
}

export interface StartWorkerOptions {
  concurrency?: number;
  schedules?: boolean;
  onWindow?: (report: WindowReport) => void;
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
  const schedules = options.schedules === false ? [] : await registerSchedules(queue, settings);
  const worker = new Worker<SyncJobData>(QUEUE_NAME, createSyncProcessor(runtime, options.onWindow), {
    connection: connections[1] as Redis,
    prefix: settings.PAYSYNC_QUEUE_PREFIX,
    concurrency: options.concurrency ?? settings.WORKER_CONCURRENCY,
    lockDuration: settings.JOB_LOCK,
    stalledInterval: settings.JOB_LOCK,
  });
  worker.on('failed', (job, error) =>
    log.warn({ job: job?.id, name: job?.name, error: error.message }, 'job failed'),
  );
  worker.on('error', (error) => log.error({ error: error.message }, 'worker error'));
  await worker.waitUntilReady();
  return {
    worker,
    queue,
    schedules,
    async close() {
      await worker.close();
      await queue.close();
      await Promise.allSettled(connections.map((c) => c.quit()));
    },
  };
}
