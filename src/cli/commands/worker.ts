/** `paysync worker`: registers the schedules and processes jobs until SIGTERM/SIGINT, then drains. */
import { Worker } from 'bullmq';
import { loadSettings, requireSources } from '../../config/settings.js';
import { checkPostgres, connectRedis, createRuntime } from '../../runtime.js';
import { createQueue, QUEUE_NAME, type SyncJobData } from '../../../jobs/queue.js';
import { registerSchedules } from '../../../jobs/schedules.js';
import { createSyncProcessor } from '../../../jobs/sync-processor.js';
import { parseCommandArgs } from '../args.js';

export async function run(argv: string[]): Promise<number> {
  const args = parseCommandArgs(
    argv,
    { concurrency: { type: 'string' }, 'no-schedules': { type: 'boolean' } },
    'paysync worker [--concurrency N] [--no-schedules]',
  );
  const settings = loadSettings();
  requireSources(settings);
  const runtime = await createRuntime(settings, { name: 'paysync-worker' });
  await checkPostgres(runtime.pool, settings.DATABASE_URL);
  const queueConnection = await connectRedis(settings.REDIS_URL, 'paysync-worker-queue');
  const workerConnection = await connectRedis(settings.REDIS_URL, 'paysync-worker-blocking');
  const queue = createQueue(queueConnection, settings.PAYSYNC_QUEUE_PREFIX);
  if (!args['no-schedules']) {
    const ids = await registerSchedules(queue, settings);
    runtime.log.info({ schedules: ids }, 'schedules registered');
  }
  const concurrency = Math.max(1, Number(args.concurrency ?? 2) || 2);
  const worker = new Worker<SyncJobData>(QUEUE_NAME, createSyncProcessor(runtime), {
    connection: workerConnection,
    prefix: settings.PAYSYNC_QUEUE_PREFIX,
    concurrency,
  });
  worker.on('failed', (job, error) =>
    runtime.log.warn({ job: job?.id, name: job?.name, error: error.message }, 'job failed'),
  );
  worker.on('error', (error) => runtime.log.error({ error: error.message }, 'worker error'));
  runtime.log.info(
    { concurrency, prefix: settings.PAYSYNC_QUEUE_PREFIX, sources: settings.sources.map((s) => s.name) },
    'worker started',
  );
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      runtime.log.info({ signal }, 'draining: finishing running jobs, taking no new ones');
      resolve();
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
  await worker.close();
  await queue.close();
  await Promise.allSettled([queueConnection.quit(), workerConnection.quit()]);
  await runtime.close();
  runtime.log.info('worker stopped');
  return 0;
}
