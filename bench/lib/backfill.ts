/**
 * One backfill measured end to end: a simulator process serving N payments over D days, a fresh warehouse,
 * W worker processes, and the wall time from enqueueing the windows to the last one done. The same run
 * also measures two baselines on the same data: a bare HTTP loop fetching the same
 * pages (parsing JSON only), and `psql \copy` of the same rows into an identical empty table.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseSettings } from '../../src/config/settings.js';
import { connectRedis } from '../../src/runtime.js';
import { planBackfill } from '../../src/sync/backfill.js';
import { backfillProgress, enqueueBackfill } from '../../jobs/backfill-queue.js';
import { localDayOf, paddedQuery, dayWindows } from '../../src/sync/windows.js';
import { migrate } from '../../src/warehouse/migrate.js';
import { createPool } from '../../src/warehouse/pool.js';
import { createQueue } from '../../jobs/queue.js';
import { dropBenchDatabase } from '../bench-db.js';
import { cpuMeter, withDatabaseCpu, type CpuSplit } from './cpu.js';
import { startSimProcess, startWorkerProcess, type SimProc } from './processes.js';

export interface BackfillSpec {
  payments: number;
  days: number;
  pageSize: number;
  pageCap?: number;
  shape?: 'wrapper' | 'array';
  workers: number;
  concurrency: number;
  /** Fields the interface does not list, added to every payment (name: JSON text), as EXTRA_FIELDS gives. */
  extraFields?: Readonly<Record<string, string>>;
}

/**
 * Two fields the interface does not list, on every payment, for the unknown-fields scenarios: numbers a
 * double holds exactly (`canonical`: the cost of keeping unknown fields), or the simulator's default pair,
 * whose `125.50` a double would alter (`exact`: every page then also takes the careful JSON reader, the
 * cost any such number has, an amount of `1500.50` as much as a new field).
 */
export const EXTRA_FIELDS = {
  canonical: { fee_amount: '125.5', channel: '"ussd"' },
  exact: { fee_amount: '125.50', channel: '"ussd"' },
} as const;

export interface BackfillFigures {
  seconds: number;
  rows: number;
  jobs: number;
  windowRuns: number;
  windows: number;
  peakRssMb: number;
  /** CPU seconds each part used between the enqueue and the last window done (workers summed). */
  cpu: CpuSplit;
  /** The valid payments the simulator holds: the warehouse must end with exactly these. */
  serviceRows: number;
}

/** The simulator's own count of the (valid) payments it serves, from its control route. */
async function servicePayments(simUrl: string): Promise<number> {
  const state = (await (await fetch(`${simUrl}/__sim/state`)).json()) as {
    counts: Record<string, { payments: number }>;
  };
  return Object.values(state.counts).reduce((sum, c) => sum + c.payments, 0);
}

export const BENCH_KEY = 'bench-key-not-secret';

export function simArgs(spec: Pick<BackfillSpec, 'payments' | 'days' | 'pageCap' | 'shape'>): string[] {
  const args = [
    '--seed',
    '1',
    '--days',
    String(spec.days),
    '--per-day',
    String(Math.ceil(spec.payments / spec.days)),
  ];
  args.push('--orgs', '1', '--clock', 'manual', '--api-key', BENCH_KEY, '--shape', spec.shape ?? 'wrapper');
  if (spec.pageCap) args.push('--page-cap', String(spec.pageCap));
  return args;
}

export function benchDatabaseUrl(): string {
  const server = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/paysync');
  server.pathname = `/paysync_bench_${randomBytes(3).toString('hex')}`;
  return server.toString();
}

export function benchEnv(simUrl: string, databaseUrl: string, pageSize: number): Record<string, string> {
  return {
    PAYMENTS_BASE_URL: simUrl,
    PAYMENTS_API_KEY: BENCH_KEY,
    DATABASE_URL: databaseUrl,
    PAYSYNC_QUEUE_PREFIX: `paysync-bench-${randomBytes(3).toString('hex')}`,
    PAGE_SIZE: String(pageSize),
    UPSTREAM_RPS: '10000', // the setting's highest value: the benchmark raises the ceiling through its setting only
    LOG_LEVEL: 'warn',
    REPORT_TIMEZONE: 'UTC',
  };
}

/** The local days the simulator's history spans (plus one on each side). */
export function benchDays(days: number): [string, string] {
  const now = Date.now();
  return [localDayOf(new Date(now - (days + 1) * 86_400_000), 'UTC'), localDayOf(new Date(now), 'UTC')];
}

export async function runBackfill(
  spec: BackfillSpec,
  sim: SimProc,
  databaseUrl: string,
): Promise<BackfillFigures> {
  await migrate(databaseUrl);
  const env = benchEnv(sim.url, databaseUrl, spec.pageSize);
  const settings = parseSettings(env);
  const [from, to] = benchDays(spec.days);
  const jobs = planBackfill(settings, settings.sources, from, to, ['payments']);
  const workers = Array.from({ length: spec.workers }, () => startWorkerProcess(env, spec.concurrency));
  const redis = await connectRedis(settings.REDIS_URL, 'paysync-bench');
  const queue = createQueue(redis, settings.PAYSYNC_QUEUE_PREFIX);
  try {
    // the clock starts once every worker is connected: process start-up is not sync work
    while ((await queue.getWorkers()).length < spec.workers) await new Promise((r) => setTimeout(r, 50));
    const cpuSinceStart = cpuMeter(
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
        await new Promise((r) => setTimeout(r, 100));
      }
    });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const cpu = { ...cpuSinceStart(), postgresOwn };
    const peakRssMb = Math.max(...workers.map((w) => w.peakRssMb()));
    const pool = createPool(databaseUrl);
    const { rows } = await pool.query<{ rows: number; runs: number; windows: number }>(
      `SELECT (SELECT count(*) FROM reporting.payments)::int AS rows,
              (SELECT coalesce(sum(attempts), 0) FROM reporting.sync_windows WHERE kind = 'backfill')::int AS runs,
              (SELECT count(*) FROM reporting.sync_windows WHERE kind = 'backfill')::int AS windows`,
    );
    await pool.end();
    const r = rows[0]!;
    const serviceRows = await servicePayments(sim.url);
    if (r.rows !== serviceRows) {
      throw new Error(
        `backfill of ${spec.payments} payments with ${spec.workers} worker(s): the warehouse holds ${r.rows} ` +
          `payments but the service ${serviceRows}; a record was lost or doubled`,
      );
    }
    return {
      seconds,
      rows: r.rows,
      jobs: jobs.length,
      windowRuns: r.runs,
      windows: r.windows,
      peakRssMb,
      cpu,
      serviceRows,
    };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    const keys = await redis.keys(`${settings.PAYSYNC_QUEUE_PREFIX}*`);
    if (keys.length) await redis.del(...keys);
    await queue.close();
    await redis.quit();
  }
}

/** Baseline (a): the same pages fetched by a bare loop that only parses JSON (`cpu`: this process's). */
export async function bareHttpLoop(
  simUrl: string,
  spec: BackfillSpec,
): Promise<{ seconds: number; items: number; cpu: number }> {
  const [from, to] = benchDays(spec.days);
  const cpuBefore = process.cpuUsage();
  const started = process.hrtime.bigint();
  let items = 0;
  for (const window of dayWindows(from, to, 'UTC')) {
    const q = paddedQuery(window, 60_000);
    for (let page = 0; ; page++) {
      const url = `${simUrl}/api/paiements/organisations?page=${page}&size=${spec.pageSize}&dateFrom=${q.dateFrom}&dateTo=${q.dateTo}`;
      const body = (await (await fetch(url, { headers: { 'X-API-Key': BENCH_KEY } })).json()) as unknown;
      const data = Array.isArray(body) ? body : (body as { data: unknown[] }).data;
      items += data.length;
      if (data.length === 0) break;
    }
  }
  const cpu = process.cpuUsage(cpuBefore);
  return {
    seconds: Number(process.hrtime.bigint() - started) / 1e9,
    items,
    cpu: (cpu.user + cpu.system) / 1e6,
  };
}

const run = promisify(execFile);

/**
 * Baseline (b): `psql \copy` of the warehouse's rows, as CSV, into an identical empty table (`postgresOwn`:
 * the CPU its backend used).
 */
export async function psqlCopyBaseline(
  databaseUrl: string,
): Promise<{ seconds: number; postgresOwn: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'paysync-bench-'));
  const file = join(dir, 'payments.csv');
  const psql = (sql: string) =>
    run('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', databaseUrl, '-c', sql], { maxBuffer: 1 << 24 });
  try {
    await psql(`\\copy reporting.payments TO '${file}' WITH (FORMAT csv)`);
    await psql('CREATE TABLE public.payments_copy (LIKE reporting.payments INCLUDING ALL)');
    const started = process.hrtime.bigint();
    const { postgresOwn } = await withDatabaseCpu(databaseUrl, () =>
      psql(`\\copy public.payments_copy FROM '${file}' WITH (FORMAT csv)`),
    );
    return { seconds: Number(process.hrtime.bigint() - started) / 1e9, postgresOwn };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Sets the simulator's switches through its control route (`paysync sim` runs in its own process). */
async function setSimSwitches(simUrl: string, switches: Record<string, unknown>): Promise<void> {
  const res = await fetch(`${simUrl}/__sim/switches`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(switches),
  });
  if (!res.ok)
    throw new Error(`the simulator refused switches ${JSON.stringify(switches)}: ${await res.text()}`);
}

export async function withSimAndDatabase<T>(
  spec: Pick<BackfillSpec, 'payments' | 'days' | 'pageCap' | 'shape' | 'extraFields'>,
  fn: (sim: SimProc, databaseUrl: string) => Promise<T>,
): Promise<T> {
  const sim = await startSimProcess(simArgs(spec));
  const databaseUrl = benchDatabaseUrl();
  try {
    if (spec.extraFields) await setSimSwitches(sim.url, { paymentExtraFields: spec.extraFields });
    return await fn(sim, databaseUrl);
  } finally {
    await sim.stop();
    await dropBenchDatabase(databaseUrl).catch(() => undefined);
  }
}
