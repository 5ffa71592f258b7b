/**
 * `paysync worker`: registers the schedules and processes jobs until SIGTERM/SIGINT, then drains within
 * DRAIN_TIMEOUT. Serves, when their ports are set, /metrics + /livez + /readyz + /healthz (METRICS_PORT,
 * from the first moment, while the start still waits for Redis, PostgreSQL or the migrations) and the ops
 * dashboard (DASHBOARD_PORT, once the worker runs).
 */
import type { Queue, Worker } from 'bullmq';
import { loadSettings, requireSources } from '../../config/settings.js';
import { ServiceUnreachableError, UsageError } from '../../errors.js';
import { createLogger, type Logger } from '../../log.js';
import { checkPostgres, createRuntime, type Runtime } from '../../runtime.js';
import { startWorker } from '../../../jobs/start-worker.js';
import { metrics } from '../../ops/metrics.js';
import { assertDashboardProtected, runtimeHealth, startProbeServer } from '../../ops/ops-server.js';
import { WorkerProbes } from '../../ops/worker-probes.js';
import { describePending, pendingMigrations, shippedMigrations } from '../../warehouse/migration-status.js';
import type { Settings } from '../../config/settings.js';
import { parseCommandArgs } from '../args.js';
import { StopSignal, untilReachable, withinBound } from '../worker-lifecycle.js';

const USAGE = 'paysync worker [--concurrency N] [--no-schedules]';

/** Redis, then PostgreSQL and the migrations: a runtime ready for jobs, or null when stopped first. */
async function reachRuntime(
  settings: Settings,
  log: Logger,
  stop: StopSignal,
  probes: WorkerProbes,
): Promise<Runtime | null> {
  const wait = { stop, log, onWaiting: (reason: string) => probes.waitingFor(reason) };
  const runtime = await untilReachable(
    () => createRuntime(settings, { name: 'paysync-worker', log, onResponse: metrics.onResponse }),
    wait,
  );
  if (!runtime) return null;
  probes.attach(await runtimeHealth(runtime));
  const shipped = await shippedMigrations();
  const ready = await untilReachable(async () => {
    await checkPostgres(runtime.pool, settings.DATABASE_URL);
    const pending = await pendingMigrations(runtime.pool, shipped);
    if (pending.length > 0) throw new ServiceUnreachableError(describePending(pending));
    return true;
  }, wait);
  if (ready) return runtime;
  await runtime.close();
  return null;
}

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
  const stop = new StopSignal();
  metrics.withProcessMetrics();
  const probes = new WorkerProbes();
  const early = await startProbeServer(settings, log, metrics, probes);
  const runtime = await reachRuntime(settings, log, stop, probes).catch(async (error) => {
    await early.close();
    throw error;
  });
  if (!runtime) {
    await early.close();
    log.info('worker stopped before it started');
    return 0;
  }
  const fail = async (error: unknown) => {
    await early.close();
    await runtime.close();
    throw error;
  };
  const running = await startWorker(runtime, {
    ...(concurrency ? { concurrency } : {}),
    schedules: !args['no-schedules'],
    onWindow: metrics.onWindow,
  }).catch(fail);
  probes.attach(await runtimeHealth(runtime, running.worker as unknown as Worker));
  const ops = await early
    .attach({
      runtime,
      queue: running.queue as unknown as Queue,
      worker: running.worker as unknown as Worker,
      metrics,
    })
    .catch(async (error) => {
      await running.close();
      return fail(error);
    });
  probes.takingJobs();
  log.info(
    {
      schedules: running.schedules,
      prefix: settings.PAYSYNC_QUEUE_PREFIX,
      sources: settings.sources.map((s) => s.name),
      metrics: ops.metricsUrl,
      dashboard: ops.dashboardUrl,
    },
    'worker started',
  );
  const signal = await stop.promise;
  log.info(
    { signal, drainTimeoutMs: settings.DRAIN_TIMEOUT },
    'draining: finishing running jobs, taking no new ones',
  );
  ops.draining();
  if (await withinBound(running.close(), settings.DRAIN_TIMEOUT)) {
    await ops.close();
    await runtime.close();
    log.info('worker stopped');
    return 0;
  }
  // The bound came first: the jobs still running are left to their locks, which expire after JOB_LOCK;
  // another worker then runs them again, and their upserts make the replay harmless. Their work still
  // holds the process (connections, timers), so it exits once this command has returned.
  log.warn(
    { drainTimeoutMs: settings.DRAIN_TIMEOUT, jobLockMs: settings.JOB_LOCK },
    'drain bound DRAIN_TIMEOUT reached with jobs still running: stopping; another worker takes them over once their locks expire (JOB_LOCK)',
  );
  await ops.close();
  setTimeout(() => process.exit(), 200).unref();
  return 0;
}
