/** Helpers for the ops tests: a worker wired to metrics and the ops servers, and waiting for jobs. */
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import type { Queue, Worker } from 'bullmq';
import type { Pool } from 'pg';
import type { Settings } from '../../src/config/settings.js';
import { silentLogger, type Logger } from '../../src/log.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { PaysyncMetrics } from '../../src/ops/metrics.js';
import { startOps, type RunningOps } from '../../src/ops/ops-server.js';
import { startWorker, type RunningWorker } from '../../jobs/start-worker.js';
import type { Harness } from './sync-harness.js';
import { createQueue } from '../../jobs/queue.js';
import { gatherStatus, type StatusData } from '../../src/ops/status-data.js';

export interface OpsStack {
  runtime: Runtime;
  running: RunningWorker;
  metrics: PaysyncMetrics;
  ops: RunningOps;
  close(): Promise<void>;
}

/**
 * A second runtime on the harness's settings (or `options.settings`) with metrics hooks, a worker, and
 * the ops servers.
 */
export async function startOpsStack(
  h: Harness,
  options: { log?: Logger; settings?: Settings } = {},
): Promise<OpsStack> {
  const metrics = new PaysyncMetrics();
  const log = options.log ?? silentLogger;
  const runtime = await createRuntime(options.settings ?? h.settings, {
    log,
    onResponse: metrics.onResponse,
    backoff: { baseMs: 5, maxMs: 50, maxRetryAfterMs: 2_000 },
    now: () => h.sim.now(),
  });
  const running = await startWorker(runtime, { schedules: false, onWindow: metrics.onWindow });
  const ops = await startOps({
    runtime,
    queue: running.queue as unknown as Queue,
    worker: running.worker as unknown as Worker,
    metrics,
  });
  return {
    runtime,
    running,
    metrics,
    ops,
    async close() {
      await ops.close();
      await running.close();
      await runtime.close();
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Waits until the job is completed or failed; returns its final state. */
export async function settled(queue: Queue, id: string, timeoutMs = 30_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = await queue.getJobState(id);
    if (state === 'completed' || state === 'failed') return state;
    if (Date.now() > deadline) throw new Error(`job ${id} still ${state} after ${timeoutMs} ms`);
    await sleep(100);
  }
}

/** The value of one sample line of a Prometheus exposition, or null when absent. */
export function sample(text: string, name: string, labels: Record<string, string> = {}): number | null {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const labelPart = line.slice(name.length, line.lastIndexOf(' '));
    if (want.every((w) => labelPart.includes(w))) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return null;
}

/**
 * A request (GET unless told) over node:http without keep-alive (fetch's pooled sockets would keep jest from exiting after the
 * servers close).
 */
export function httpGet(
  url: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<{ status: number; text: string; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers, method }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** One reconcile run of `day` as `paysync reconcile` records it: payments match, transfers differ by `off`. */
export async function insertReconcileRun(pool: Pool, day: string, off: number): Promise<void> {
  await pool.query(
    `INSERT INTO reporting.reconcile_results
       (run_id, day, source, stream, status, service, warehouse, difference, method)
     VALUES ($3, $1, 'default', 'payments', 'COMPLETE', 10, 10, 0, 'count'),
            ($3, $1, 'default', 'transfers', 'COMPLETE', 5, 5 - $2::int, $2::int, 'count')`,
    [day, off, randomUUID()],
  );
}

/** What `paysync status` gathers for a harness, on the simulator's clock, with its real queue's counts. */
export async function harnessStatus(h: Harness): Promise<StatusData> {
  const queue = createQueue(h.runtime.redis, h.settings.PAYSYNC_QUEUE_PREFIX);
  return gatherStatus({
    pool: h.runtime.pool,
    checkpoints: h.runtime.checkpoints,
    sources: h.settings.sources,
    settings: h.settings,
    queue,
    now: () => h.sim.now(),
  }).finally(() => queue.close());
}
