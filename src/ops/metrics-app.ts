/**
 * The metrics and health endpoints: /metrics (Prometheus text), /healthz (process up, Redis and
 * PostgreSQL reachable) and /readyz (healthy and taking jobs). Unauthenticated, as scrapers and probes
 * expect: it shows counts and times, never record data, and binds to loopback unless METRICS_HOST says
 * otherwise.
 */
import express, { type Express, type Response } from 'express';
import { checkHealth, checkReady, type HealthDeps, type HealthReport } from './health.js';
import type { PaysyncMetrics } from './metrics.js';
import type { StatusData } from './status-data.js';

export interface MetricsAppDeps {
  metrics: PaysyncMetrics;
  status: () => Promise<StatusData>;
  health: HealthDeps;
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
      const text = await deps.metrics.render(deps.status);
      res.set('Content-Type', deps.metrics.contentType).send(text);
    } catch (error) {
      next(error);
    }
  });
  app.get('/healthz', async (_req, res) => sendHealth(res, await checkHealth(deps.health)));
  app.get('/readyz', async (_req, res) => sendHealth(res, await checkReady(deps.health)));
  return app;
}
