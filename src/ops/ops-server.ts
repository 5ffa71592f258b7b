/**
 * What `paysync worker` serves besides jobs, each behind its setting and off when unset:
 * METRICS_PORT (on METRICS_HOST) → /metrics, /healthz, /readyz;
 * DASHBOARD_PORT (on DASHBOARD_HOST) → Bull Board at /queues and the status page at /status.
 * Both default to loopback; a dashboard on any other address needs DASHBOARD_TOKEN.
 */
import type { Job, Queue, Worker } from 'bullmq';
import type { Express } from 'express';
import type { Settings } from '../config/settings.js';
import { ConfigError } from '../errors.js';
import type { Runtime } from '../sync/services.js';
import { dashboardApp } from './dashboard.js';
import { isLoopback, listen, type RunningServer, type ServeOptions } from './http-server.js';
import { RESULT_DAYS, type PaysyncMetrics } from './metrics.js';
import { mismatchesByDay, recentReconcileResults } from './reconcile-results.js';
import { gatherExports } from './export-state.js';
import { metricsApp } from './metrics-app.js';
import { readCircuit } from '../sync/circuit.js';
import { gatherStatus } from './status-data.js';
import { gatherStatusPage } from './status-gather.js';
import { restatedAfterSignoff } from './status-signoffs.js';

export interface OpsDeps {
  runtime: Runtime;
  queue: Queue;
  worker?: Worker;
  metrics: PaysyncMetrics;
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

export async function startOps(deps: OpsDeps): Promise<RunningOps> {
  const { runtime, queue, metrics } = deps;
  const settings = runtime.settings;
  assertDashboardProtected(settings);
  const serve: ServeOptions = { allowedHosts: settings.OPS_ALLOWED_HOSTS, log: runtime.log };
  let taking = true;
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
  const servers: RunningServer[] = [];
  let metricsUrl: string | null = null;
  let dashboardUrl: string | null = null;
  try {
    if (settings.METRICS_PORT !== undefined) {
      const ready = () => taking && (deps.worker ? deps.worker.isRunning() : true);
      const refresh = async () => {
        for (const d of mismatchesByDay(await recentReconcileResults(runtime.pool, RESULT_DAYS)))
          metrics.recordReconcileResult(d.day, d.mismatches, d.at, d.quarantined);
        metrics.setRestatedAfterSignoff((await restatedAfterSignoff(runtime.pool)).map((d) => d.day));
        metrics.setExports(await gatherExports(runtime.pool, settings, runtime.now(), RESULT_DAYS));
        return status();
      };
      const health = { redis: runtime.redis, pool: runtime.pool, ready };
      const app = metricsApp({ metrics, status: refresh, health });
      const server = await listenNamed(app, 'METRICS', settings.METRICS_HOST, settings.METRICS_PORT, serve);
      servers.push(server);
      metricsUrl = server.url;
    }
    if (settings.DASHBOARD_PORT !== undefined) {
      const app = dashboardApp({
        queue,
        pool: runtime.pool,
        status,
        extras: (data) =>
          gatherStatusPage({ pool: runtime.pool, queue, settings, now: () => new Date() }, data),
        token: settings.DASHBOARD_TOKEN,
      });
      const server = await listenNamed(
        app,
        'DASHBOARD',
        settings.DASHBOARD_HOST,
        settings.DASHBOARD_PORT,
        serve,
      );
      servers.push(server);
      dashboardUrl = server.url;
    }
  } catch (error) {
    await Promise.allSettled(servers.map((s) => s.close()));
    throw error;
  }
  if (deps.worker) countJobs(deps.worker, metrics);
  return {
    metricsUrl,
    dashboardUrl,
    draining: () => {
      taking = false;
    },
    close: async () => {
      await Promise.allSettled(servers.map((s) => s.close()));
    },
  };
}
