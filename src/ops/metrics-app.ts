/**
 * The metrics and probe endpoints: /metrics (Prometheus text), /livez (the process and its event loop
 * answer), /readyz (Redis and PostgreSQL answer, migrations applied, taking jobs) and /healthz (the older
 * name of /readyz, kept for the image's HEALTHCHECK and existing checks). Unauthenticated, as scrapers and
 * probes expect: it shows counts, times and paysync's own health, never record data, and binds to
 * loopback unless METRICS_HOST says otherwise. Served from the worker's first moment: until the runtime
 * exists, /metrics has the process metrics only and /readyz says what the start waits for.
 */
import express, { type Express, type Response } from 'express';
import type { HealthReport } from './health.js';
import type { PaysyncMetrics } from './metrics.js';
import type { StatusData } from './status-data.js';
import type { WorkerProbes } from './worker-probes.js';

export interface MetricsAppDeps {
  metrics: PaysyncMetrics;
  /** The status gathering that refreshes the state gauges; null while the worker starts. */
  status: () => (() => Promise<StatusData>) | null;
  probes: WorkerProbes;
}

function sendHealth(res: Response, report: HealthReport): void {
  res
    .status(report.ok ? 200 : 503)
    .set('Cache-Control', 'no-store')
    .json({ status: report.ok ? 'ok' : 'unavailable', ...report.checks });
}

export function metricsApp(deps: MetricsAppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.get('/metrics', async (_req, res, next) => {
    try {
      const text = await deps.metrics.render(deps.status() ?? undefined);
      res.set('Content-Type', deps.metrics.contentType).send(text);
    } catch (error) {
      next(error);
    }
  });
  app.get('/livez', (_req, res) => sendHealth(res, deps.probes.live()));
  app.get(['/readyz', '/healthz'], async (_req, res) => sendHealth(res, await deps.probes.ready()));
  return app;
}
