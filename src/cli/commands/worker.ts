/**
 * `paysync worker`: registers the schedules and processes jobs until SIGTERM/SIGINT, then drains. Also
 * serves, when their ports are set, /metrics + /healthz + /readyz (METRICS_PORT) and the ops dashboard
 * (DASHBOARD_PORT).
 */
import type { Queue, Worker } from 'bullmq';
import { loadSettings, requireSources } from '../../config/settings.js';
import { UsageError } from '../../errors.js';
import { createLogger } from '../../log.js';
import { checkPostgres, createRuntime } from '../../runtime.js';
import { startWorker } from '../../../jobs/start-worker.js';
import { metrics } from '../../ops/metrics.js';
import { assertDashboardProtected, startOps } from '../../ops/ops-server.js';
import { parseCommandArgs } from '../args.js';

const USAGE = 'paysync worker [--concurrency N] [--no-schedules]';

export async function run(argv: string[]): Promise<number> {
  const args = parseCommandArgs(
    argv,
    { concurrency: { type: 'string' }, 'no-schedules': { type: 'boolean' } },
    USAGE,
  );
  const concurrency = args.concurrency === undefined ? undefined : Number(args.concurrency);
  if (concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency >= 1)) {
    throw new UsageError(`--concurrency must be a whole number of at least 1 (got "${args.concurrency}")`);
  }
  const settings = loadSettings();
  requireSources(settings);
  assertDashboardProtected(settings);
  // The key values themselves are scrubbed from every log line, whatever field or message holds them.
  const log = createLogger({
    level: settings.LOG_LEVEL,
    format: settings.LOG_FORMAT,
    secrets: settings.sources.map((s) => s.apiKey),
  });
  metrics.withProcessMetrics();
  const runtime = await createRuntime(settings, {
    name: 'paysync-worker',
    log,
    onResponse: metrics.onResponse,
  });
  await checkPostgres(runtime.pool, settings.DATABASE_URL);
  const running = await startWorker(runtime, {
    ...(concurrency ? { concurrency } : {}),
    schedules: !args['no-schedules'],
    onWindow: metrics.onWindow,
  });
  const ops = await startOps({
    runtime,
    queue: running.queue as unknown as Queue,
    worker: running.worker as unknown as Worker,
    metrics,
  }).catch(async (error) => {
    await running.close();
    await runtime.close();
    throw error;
  });
  runtime.log.info(
    {
      schedules: running.schedules,
      prefix: settings.PAYSYNC_QUEUE_PREFIX,
      sources: settings.sources.map((s) => s.name),
      metrics: ops.metricsUrl,
      dashboard: ops.dashboardUrl,
    },
    'worker started',
  );
  const signal = await new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  runtime.log.info({ signal }, 'draining: finishing running jobs, taking no new ones');
  ops.draining();
  await running.close();
  await ops.close();
  await runtime.close();
  runtime.log.info('worker stopped');
  return 0;
}
