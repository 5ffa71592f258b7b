/**
 * What `paysync worker` serves besides jobs, each behind its setting and off when unset:
 * METRICS_PORT (on METRICS_HOST) → /metrics, /livez, /readyz, /healthz (from the worker's first moment);
 * DASHBOARD_PORT (on DASHBOARD_HOST) → Bull Board at /queues and the status page at /status.
 * Both default to loopback; a dashboard on any other address needs DASHBOARD_TOKEN. Both ports are bound
 * before the worker does anything else (no request to the service, no record loaded, no schedule
 * registered), so a port that cannot be served stops it at once (exit 2) with nothing done.
 */
import type { Job, Queue, Worker } from 'bullmq';
import express, { type Express } from 'express';
import type { Settings } from '../config/settings.js';
import { ConfigError } from '../errors.js';
import type { Runtime } from '../sync/services.js';
import { dashboardApp } from './dashboard.js';
import { isLoopback, listen, type RunningServer, type ServeOptions } from './http-server.js';
import { RESULT_DAYS, type PaysyncMetrics } from './metrics.js';
import { mismatchesByDay, recentReconcileResults } from './reconcile-results.js';
import { readCircuit } from '../sync/circuit.js';
import { gatherExports } from './export-state.js';
import { metricsApp } from './metrics-app.js';
import { gatherStatus, type StatusData } from './status-data.js';
import { gatherStatusPage } from './status-gather.js';
import { restatedAfterSignoff } from './status-signoffs.js';
import { pendingMigrations, shippedMigrations } from '../warehouse/migration-status.js';
import type { HealthDeps } from './health.js';
import { WorkerProbes } from './worker-probes.js';
import { unacknowledgedCounts } from '../warehouse/field-sightings.js';

export interface OpsDeps {
  runtime: Runtime;
  queue: Queue;
  worker?: Worker;
  metrics: PaysyncMetrics;
}

export interface OpsEarly {
  metricsUrl: string | null;
  /** The runtime and the worker exist: metrics refresh from status, the dashboard starts, jobs count. */
  attach(deps: OpsDeps): Promise<RunningOps>;
  close(): Promise<void>;
}

export interface RunningOps {
  metricsUrl: string | null;
  dashboardUrl: string | null;
  /** Readiness turns false: the worker is draining. */
  draining(): void;
  close(): Promise<void>;
}

/** Refuses a dashboard reachable from other machines without a token (exit 2, naming the setting). */
export function assertDashboardProtected(settings: Settings): void {
  if (settings.DASHBOARD_PORT === undefined || settings.DASHBOARD_TOKEN) return;
  if (!isLoopback(settings.DASHBOARD_HOST)) {
    throw new ConfigError(
      `DASHBOARD_TOKEN must be set when DASHBOARD_HOST (${settings.DASHBOARD_HOST}) is not a loopback address: ` +
        'the dashboard can retry and remove jobs',
    );
  }
}

/** Counts job outcomes; a failure BullMQ will retry counts as `retrying`, the last one as `failed`. */
export function countJobs(worker: Worker, metrics: PaysyncMetrics): void {
  worker.on('completed', (job: Job) => metrics.onJob(job.name, 'completed'));
  worker.on('failed', (job: Job | undefined) => {
    if (!job) return;
    const more = job.attemptsMade < (job.opts.attempts ?? 1) && !job.finishedOn;
    metrics.onJob(job.name, more ? 'retrying' : 'failed');
  });
}

/** Listens, turning "address in use" and the like into one line naming the settings. */
async function listenNamed(
  app: Express,
  name: string,
  host: string,
  port: number,
  options: ServeOptions,
): Promise<RunningServer> {
  try {
    return await listen(app, host, port, options);
  } catch (error) {
    throw new ConfigError(
      `${name}_PORT ${port} on ${name}_HOST ${host} cannot be served: ${(error as Error).message}`,
    );
  }
}

/**
 * The probe and metrics server, started before anything else of `paysync worker` (off when METRICS_PORT
 * is unset): /livez answers from the first moment, /readyz says what the start waits for. `attach` adds
 * the rest once the runtime and the worker exist.
 */
export async function startProbeServer(
  settings: Settings,
  log: Runtime['log'],
  metrics: PaysyncMetrics,
  probes: WorkerProbes,
): Promise<OpsEarly> {
  const serve: ServeOptions = { allowedHosts: settings.OPS_ALLOWED_HOSTS, log };
  let refresh: (() => Promise<StatusData>) | null = null;
  const server =
    settings.METRICS_PORT === undefined
      ? null
      : await listenNamed(
          metricsApp({ metrics, status: () => refresh, probes }),
          'METRICS',
          settings.METRICS_HOST,
          settings.METRICS_PORT,
          serve,
        );
  const dashboard = await startDashboardShell(settings, serve).catch(async (error: unknown) => {
    await server?.close();
    throw error;
  });
  const close = async () => {
    await Promise.allSettled([server?.close(), dashboard?.server.close()]);
  };
  return {
    metricsUrl: server?.url ?? null,
    close,
    attach: async (deps) => {
      const { runtime, queue } = deps;
      const status = () =>
        gatherStatus({
          pool: runtime.pool,
          checkpoints: runtime.checkpoints,
          sources: settings.sources,
          settings,
          queue,
          circuits: (name) => readCircuit(runtime.redis, settings.PAYSYNC_QUEUE_PREFIX, name),
          now: () => runtime.now(),
        });
      refresh = async () => {
        for (const d of mismatchesByDay(await recentReconcileResults(runtime.pool, RESULT_DAYS)))
          metrics.recordReconcileResult(d.day, d.mismatches, d.at, d.quarantined);
        metrics.setRestatedAfterSignoff((await restatedAfterSignoff(runtime.pool)).map((d) => d.day));
        metrics.setExports(await gatherExports(runtime.pool, settings, runtime.now(), RESULT_DAYS));
        metrics.setRecordShapeChanges(await unacknowledgedCounts(runtime.pool));
        return status();
      };
      dashboard?.mount(dashboardOf(deps, status));
      if (deps.worker) countJobs(deps.worker, metrics);
      return {
        metricsUrl: server?.url ?? null,
        dashboardUrl: dashboard?.server.url ?? null,
        draining: () => probes.draining(),
        close,
      };
    },
  };
}

/**
 * The dashboard's port, bound at once (off when DASHBOARD_PORT is unset): until `mount` gives it the
 * dashboard, every request gets 503 "starting" (nothing of the queue or the warehouse is read yet).
 */
async function startDashboardShell(
  settings: Settings,
  serve: ServeOptions,
): Promise<{ server: RunningServer; mount(app: Express): void } | null> {
  if (settings.DASHBOARD_PORT === undefined) return null;
  let mounted: Express | null = null;
  const shell = express();
  shell.disable('x-powered-by');
  shell.use((req, res, next) => {
    if (mounted) return void mounted(req, res, next);
    res.status(503).type('text/plain').send('paysync ops: the worker is starting\n');
  });
  const server = await listenNamed(
    shell,
    'DASHBOARD',
    settings.DASHBOARD_HOST,
    settings.DASHBOARD_PORT,
    serve,
  );
  return { server, mount: (app) => void (mounted = app) };
}

function dashboardOf(deps: OpsDeps, status: () => Promise<StatusData>): Express {
  const { runtime, queue } = deps;
  const settings = runtime.settings;
  return dashboardApp({
    queue,
    pool: runtime.pool,
    status,
    extras: (data) =>
      gatherStatusPage(
        { pool: runtime.pool, queue, settings, redis: runtime.redis, now: () => new Date() },
        data,
      ),
    token: settings.DASHBOARD_TOKEN,
  });
}

/** The readiness checks of a built runtime (and its worker, when given): health.ts. */
export async function runtimeHealth(runtime: Runtime, worker?: Worker): Promise<HealthDeps> {
  const shipped = await shippedMigrations();
  return {
    redis: runtime.redis,
    pool: runtime.pool,
    pendingMigrations: () => pendingMigrations(runtime.pool, shipped),
    ...(worker ? { ready: () => worker.isRunning() } : {}),
  };
}

/** Both ports at once, for a runtime and worker already running (tests, embedded uses). */
export async function startOps(deps: OpsDeps): Promise<RunningOps> {
  const { runtime, metrics } = deps;
  assertDashboardProtected(runtime.settings);
  const probes = new WorkerProbes(await runtimeHealth(runtime, deps.worker));
  const early = await startProbeServer(runtime.settings, runtime.log, metrics, probes);
  try {
    return await early.attach(deps);
  } catch (error) {
    await early.close();
    throw error;
  }
}
