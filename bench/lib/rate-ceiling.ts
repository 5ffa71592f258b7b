/**
 * The rate ceiling scenario: a backfill against a service that answers every list request after a fixed
 * latency and caps its pages, with `UPSTREAM_RPS` set low enough to be the limit. What it measures, from
 * the simulator's own request log (retries included): the requests per second the backfill achieved from
 * its first request to its last, as a share of the ceiling, and the most requests any sliding window of
 * the ceiling's contract held (rate-gate.ts: one second, five below 5 req/s).
 */
import { parseSettings } from '../../src/config/settings.js';
import { connectRedis } from '../../src/runtime.js';
import { planBackfill } from '../../src/sync/backfill.js';
import { ceilingContract } from '../../src/sync/rate-gate.js';
import { maxRequestsInWindow } from '../../src/sim/request-log.js';
import { backfillProgress, enqueueBackfill } from '../../jobs/backfill-queue.js';
import { createQueue } from '../../jobs/queue.js';
import { migrate } from '../../src/warehouse/migrate.js';
import { benchDays, benchEnv, withSimAndDatabase } from './backfill.js';
import { cpuMeter, withDatabaseCpu, type CpuSplit } from './cpu.js';
import { startWorkerProcess, type SimProc } from './processes.js';

export interface CeilingSpec {
  payments: number;
  days: number;
  rps: number;
  latencyMs: number;
  pageCap: number;
  pageSize: number;
  workers: number;
  shape?: 'wrapper' | 'array';
  /** Also return the arrival times (for a closer look at the busiest window). */
  keepLog?: boolean;
}

export interface CeilingFigures {
  requests: number;
  /** Seconds from the first request the simulator logged to the last. */
  spanSeconds: number;
  /** Requests per second over that span. */
  achieved: number;
  /** The most requests any sliding window of the contract held, and the most it allows. */
  busiest: number;
  allowed: number;
  windowMs: number;
  /** Statuses the simulator answered (429s would show the ceiling was exceeded at the service). */
  byStatus: Record<string, number>;
  cpu: CpuSplit;
  seconds: number;
  peakRssMb: number;
  /** Arrival times, sorted (only with `keepLog`). */
  times?: number[];
}

interface LogEntry {
  receivedAt: number;
  status: number | string;
}

async function simLog(sim: SimProc): Promise<LogEntry[]> {
  return (await (await fetch(`${sim.url}/__sim/log`)).json()) as LogEntry[];
}

async function setSwitches(sim: SimProc, switches: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${sim.url}/__sim/switches`, { method: 'POST', body: JSON.stringify(switches) });
  if (!res.ok) throw new Error(`simulator refused switches ${JSON.stringify(switches)}: ${await res.text()}`);
}

export async function rateCeilingRun(spec: CeilingSpec): Promise<CeilingFigures> {
  return withSimAndDatabase({ ...spec }, async (sim, databaseUrl) => {
    await migrate(databaseUrl);
    const env = { ...benchEnv(sim.url, databaseUrl, spec.pageSize), UPSTREAM_RPS: String(spec.rps) };
    const settings = parseSettings(env);
    const [from, to] = benchDays(spec.days);
    const jobs = planBackfill(settings, settings.sources, from, to, ['payments']);
    const workers = Array.from({ length: spec.workers }, () =>
      startWorkerProcess(env, settings.WORKER_CONCURRENCY),
    );
    const redis = await connectRedis(settings.REDIS_URL, 'paysync-bench');
    const queue = createQueue(redis, settings.PAYSYNC_QUEUE_PREFIX);
    try {
      while ((await queue.getWorkers()).length < spec.workers) await new Promise((r) => setTimeout(r, 50));
      await setSwitches(sim, { latencyMs: spec.latencyMs });
      await fetch(`${sim.url}/__sim/clear-log`, { method: 'POST' });
      const cpuSince = cpuMeter(
        workers.map((w) => w.pid),
        sim.pid,
      );
      const started = process.hrtime.bigint();
      const { postgresOwn } = await withDatabaseCpu(databaseUrl, async () => {
        await enqueueBackfill(queue, jobs);
        for (;;) {
          const p = await backfillProgress(queue, jobs);
          if (p.failed.length) throw new Error(`backfill failed: ${JSON.stringify(p.failed.slice(0, 3))}`);
          if (p.done >= p.total) break;
          await new Promise((r) => setTimeout(r, 200));
        }
      });
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const cpu = { ...cpuSince(), postgresOwn };
      const log = (await simLog(sim)).filter((e) => typeof e.receivedAt === 'number');
      const times = log.map((e) => e.receivedAt).sort((a, b) => a - b);
      const spanSeconds = ((times.at(-1) ?? 0) - (times[0] ?? 0)) / 1000;
      const { windowMs, most } = ceilingContract(spec.rps);
      const byStatus: Record<string, number> = {};
      for (const e of log) byStatus[String(e.status)] = (byStatus[String(e.status)] ?? 0) + 1;
      return {
        requests: log.length,
        spanSeconds,
        achieved: log.length > 1 ? (log.length - 1) / spanSeconds : NaN,
        busiest: maxRequestsInWindow(log, windowMs),
        allowed: most,
        windowMs,
        byStatus,
        cpu,
        seconds,
        peakRssMb: Math.max(...workers.map((w) => w.peakRssMb())),
        ...(spec.keepLog ? { times } : {}),
      };
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
      const keys = await redis.keys(`${settings.PAYSYNC_QUEUE_PREFIX}*`);
      if (keys.length) await redis.del(...keys);
      await queue.close();
      await redis.quit();
    }
  });
}
