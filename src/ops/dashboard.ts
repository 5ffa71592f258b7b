/**
 * The ops dashboard: Bull Board (the BullMQ ecosystem's queue UI: jobs waiting, active, failed with their
 * error, retry and remove) at /queues, and paysync's own status page at /status. Everything behind
 * DASHBOARD_TOKEN when it is set; the worker refuses to expose it beyond loopback without one. It answers
 * only its own Host names (DNS rebinding), and without a token it is read-only (auth.ts).
 */
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import type { Queue } from 'bullmq';
import express, { type Express } from 'express';
import type { Pool } from 'pg';
import { recentReconcileResults } from './reconcile-results.js';
import {
  allowedHostNames,
  knownHostsOnly,
  readOnlyWithoutToken,
  requireToken,
  sameOriginWrites,
} from './auth.js';
import { renderStatusPage } from './status-page.js';
import type { StatusData } from './status-data.js';

export const QUEUES_PATH = '/queues';
export const STATUS_PATH = '/status';
const RECONCILE_DAYS = 14;

export interface DashboardDeps {
  queue: Queue;
  pool: Pool;
  status: () => Promise<StatusData>;
  token?: string | undefined;
  /** The address the dashboard listens on (DASHBOARD_HOST). */
  host?: string;
  /** More Host names it answers to (DASHBOARD_ALLOWED_HOSTS). */
  allowedHosts?: readonly string[];
}

function queueBoard(queue: Queue, readOnlyMode: boolean): express.Router {
  const serverAdapter = new ExpressAdapter();
  serverAdapter.setBasePath(QUEUES_PATH);
  createBullBoard({
    queues: [
      new BullMQAdapter(queue, {
        description: 'paysync sync jobs: ticks, backfill windows, scans',
        readOnlyMode,
      }),
    ],
    serverAdapter,
    options: { uiConfig: { boardTitle: 'paysync queues' } },
  });
  return serverAdapter.getRouter() as express.Router;
}

export function dashboardApp(deps: DashboardDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use(
    knownHostsOnly(allowedHostNames(deps.host ?? '127.0.0.1', deps.allowedHosts ?? [])),
    requireToken(deps.token),
    readOnlyWithoutToken(deps.token),
    sameOriginWrites,
  );
  app.get('/', (_req, res) => res.redirect(STATUS_PATH));
  app.get(STATUS_PATH, async (_req, res, next) => {
    try {
      const [status, reconcile] = await Promise.all([
        deps.status(),
        recentReconcileResults(deps.pool, RECONCILE_DAYS),
      ]);
      const html = renderStatusPage({
        status,
        reconcile,
        generatedAt: new Date(),
        queuesPath: QUEUES_PATH,
        reconcileDays: RECONCILE_DAYS,
      });
      res.type('html').set('Cache-Control', 'no-store').send(html);
    } catch (error) {
      next(error);
    }
  });
  app.get(`${STATUS_PATH}.json`, async (_req, res, next) => {
    try {
      res.json(await deps.status());
    } catch (error) {
      next(error);
    }
  });
  app.use(QUEUES_PATH, queueBoard(deps.queue, deps.token === undefined));
  return app;
}
