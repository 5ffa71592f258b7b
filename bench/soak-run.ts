/**
 * One run of the crash soak: a fresh warehouse and simulator, a backfill on worker processes that are
 * killed with SIGKILL at seeded random moments (once or twice) and replaced, then an export of one day in
 * a child process that is itself killed in some runs and run again. The run matches when the warehouse
 * equals the simulator record by record, nothing is doubled, and the day's pack is whole as its manifest
 * names it. `bench/soak.ts` repeats it over seeds; `test/drills-crash.test.ts` runs a short version.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { parseSettings } from '../src/config/settings.js';
import { PAUSE_ANNOUNCEMENT } from '../src/pause-point.js';
import { connectRedis } from '../src/runtime.js';
import { mix32, mulberry32 } from '../src/sim/prng.js';
import { startSimulator } from '../src/sim/server.js';
import type { RunningSimulator } from '../src/sim/types.js';
import { planBackfill, type PlannedJob } from '../src/sync/backfill.js';
import { backfillProgress, enqueueBackfill } from '../jobs/backfill-queue.js';
import { localDayOf } from '../src/sync/windows.js';
import { migrate } from '../src/warehouse/migrate.js';
import { createPool } from '../src/warehouse/pool.js';
import { createQueue, type SyncJobData } from '../jobs/queue.js';
import { dropBenchDatabase } from './bench-db.js';
import { benchDatabaseUrl } from './lib/backfill.js';
import { doubled, packProblems, warehouseDifferences } from './soak-check.js';

export interface SoakOptions {
  seed: number;
  /** Days of history and payments per day (defaults: 4 and 250). */
  days?: number;
  perDay?: number;
  /** Gives up on a backfill after this long (default 120 s). */
  timeoutMs?: number;
  /** Overrides the seeded choice of killing a first export attempt (true: at the seeded point). */
  killExport?: boolean | ExportPausePoint;
}

export interface SoakResult {
  seed: number;
  matched: boolean;
  /** What did not match (empty when matched). */
  problems: string[];
  workerKills: number;
  /** Kills that landed while a window job was active. */
  killsMidJob: number;
  exportKilled: boolean;
  /** The pause point the export was killed at. */
  exportKilledAt?: string;
  /** Jobs that failed after the kills (e.g. stalled twice) and were re-run by re-enqueueing the range. */
  failedThenRerun: number;
  tmpLeftovers: number;
  payments: number;
  transfers: number;
  seconds: number;
}

/** bin/paysync.js, found upwards from this file (it runs from bench/ under jest and from dist/bench/). */
function paysyncBin(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    const bin = join(dir, 'bin', 'paysync.js');
    if (existsSync(bin)) return bin;
    if (dirname(dir) === dir) throw new Error('bin/paysync.js not found above bench/');
  }
}

interface Child {
  process: ChildProcess;
  exited: Promise<number | null>;
  stderr: () => string;
}

function startChild(args: string[], env: Record<string, string>, cwd: string): Child {
  const child = spawn(process.execPath, [paysyncBin(), ...args], {
    env: { PATH: process.env.PATH ?? '', ...env },
    cwd, // no .env of the caller's directory
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4_000)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { process: child, exited, stderr: () => stderr };
}

async function kill(child: Child): Promise<void> {
  if (child.process.exitCode === null && child.process.signalCode === null) child.process.kill('SIGKILL');
  await child.exited;
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

/** Polls until every planned job is done or failed; returns the failed ids. */
async function settle(queue: Queue<SyncJobData>, jobs: PlannedJob[], timeoutMs: number): Promise<string[]> {
  let failed: string[] = [];
  await waitFor(
    'the backfill',
    async () => {
      const p = await backfillProgress(queue, jobs);
      failed = p.failed.map((f) => f.id);
      return p.done + p.failed.length >= p.total;
    },
    timeoutMs,
  );
  return failed;
}

/** Every random choice of a run, drawn up front from its seed, so a run's plan does not depend on timing. */
interface CrashPlan {
  slowMs: number;
  shape: 'wrapper' | 'array';
  /** Delay after a window job starts before each worker kill (one or two kills). */
  killDelaysMs: number[];
  /** Where the first export attempt is paused and killed (a named pause point); null: it is not killed. */
  exportKillAt: ExportPausePoint | null;
}

/** The export's pause points (src/reconcile/export-day.ts): files written, manifest written, folder renamed. */
const EXPORT_PAUSE_POINTS = ['export:files-written', 'export:before-publish', 'export:after-rename'] as const;
export type ExportPausePoint = (typeof EXPORT_PAUSE_POINTS)[number];

export function crashPlan(seed: number, killExport?: boolean | ExportPausePoint): CrashPlan {
  const rng = mulberry32(mix32(seed, 0x736f616b));
  const draws = Array.from({ length: 6 }, () => rng());
  const [slow, shape, twice, first, second, exportAt] = draws as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const killDelaysMs = [first, second].slice(0, twice < 0.4 ? 2 : 1).map((d) => Math.floor(d * 1_200));
  const killsExport = killExport ?? exportAt < 0.5;
  return {
    slowMs: 15 + Math.floor(slow * 20),
    shape: shape < 0.5 ? 'wrapper' : 'array',
    killDelaysMs,
    // exportAt < 0.5 when seeded: spread it back over 0..1 to pick the point
    exportKillAt: !killsExport
      ? null
      : typeof killExport === 'string'
        ? killExport
        : EXPORT_PAUSE_POINTS[Math.floor(((exportAt * 2) % 1) * EXPORT_PAUSE_POINTS.length)]!,
  };
}

interface RunContext {
  plan: CrashPlan;
  env: Record<string, string>;
  cwd: string;
  queue: Queue<SyncJobData>;
  workers: Child[];
  result: SoakResult;
}

async function startWorkerProcess(ctx: RunContext): Promise<Child> {
  const before = (await ctx.queue.getWorkers()).length;
  const worker = startChild(['worker', '--no-schedules', '--concurrency', '2'], ctx.env, ctx.cwd);
  ctx.workers.push(worker);
  await waitFor(
    'a worker to connect',
    async () => {
      if (worker.process.exitCode !== null) throw new Error(`worker exited: ${worker.stderr()}`);
      return (await ctx.queue.getWorkers()).length > before;
    },
    30_000,
  );
  return worker;
}

/** Kills the worker at a random moment once it is fetching (0-1.2 s in: mid-page, or between commit and bookkeeping). */
async function killWorkerSomewhere(ctx: RunContext, worker: Child, delayMs: number): Promise<void> {
  await waitFor('a window job to start', async () => (await ctx.queue.getActiveCount()) > 0, 30_000);
  await sleep(delayMs);
  if ((await ctx.queue.getActiveCount()) > 0) ctx.result.killsMidJob++;
  await kill(worker);
  ctx.result.workerKills++;
}

async function backfillThroughCrashes(ctx: RunContext, jobs: PlannedJob[], timeoutMs: number): Promise<void> {
  let worker = await startWorkerProcess(ctx);
  await enqueueBackfill(ctx.queue, jobs);
  for (const delayMs of ctx.plan.killDelaysMs) {
    const done = (await backfillProgress(ctx.queue, jobs)).done;
    if (done >= jobs.length) break; // finished before this kill could land
    await killWorkerSomewhere(ctx, worker, delayMs);
    worker = await startWorkerProcess(ctx);
  }
  const failed = await settle(ctx.queue, jobs, timeoutMs);
  if (failed.length > 0) {
    // what ops do after failed windows: run the same range again (harmless by design)
    ctx.result.failedThenRerun = failed.length;
    await enqueueBackfill(ctx.queue, jobs);
    const again = await settle(ctx.queue, jobs, timeoutMs);
    if (again.length > 0) ctx.result.problems.push(`windows failed twice: ${again.join(', ')}`);
  }
}

/**
 * Exports the day in a child process; in some runs a first attempt is paused at a named point (the seeded
 * plan picks which) and killed there, on its own announcement, so the kill lands where it means to.
 */
async function exportThroughCrash(ctx: RunContext, day: string): Promise<void> {
  if (ctx.plan.exportKillAt !== null) {
    const pauseAt = ctx.plan.exportKillAt;
    const doomed = startChild(['export', '--day', day], { ...ctx.env, PAYSYNC_PAUSE_AT: pauseAt }, ctx.cwd);
    await waitFor(
      `the export to pause at ${pauseAt}`,
      async () => {
        if (doomed.process.exitCode !== null)
          throw new Error(`export exited ${doomed.process.exitCode}: ${doomed.stderr()}`);
        return doomed.stderr().includes(`${PAUSE_ANNOUNCEMENT}${pauseAt}`);
      },
      30_000,
    );
    await kill(doomed);
    ctx.result.exportKilled = true;
    ctx.result.exportKilledAt = pauseAt;
  }
  const exporter = startChild(['export', '--day', day], ctx.env, ctx.cwd);
  const code = await exporter.exited;
  if (code !== 0) ctx.result.problems.push(`export exited ${code}: ${exporter.stderr().trim()}`);
}

async function check(ctx: RunContext, sim: RunningSimulator, databaseUrl: string, dayDir: string) {
  const org = sim.organisations[0] as string;
  const pool = createPool(databaseUrl, { max: 2 });
  try {
    const diffs = await warehouseDifferences(pool, sim, org);
    ctx.result.problems.push(...diffs.slice(0, 10));
    if (diffs.length > 10) ctx.result.problems.push(`… ${diffs.length - 10} more differences`);
    ctx.result.problems.push(...(await doubled(pool)));
  } finally {
    await pool.end();
  }
  const pack = await packProblems(dayDir, ctx.env.PAYMENTS_API_KEY as string);
  ctx.result.problems.push(...pack.problems);
  ctx.result.tmpLeftovers = pack.leftovers;
  ctx.result.payments = sim.payments(org).length;
  ctx.result.transfers = sim.transfers(org).length;
}

export async function soakRun(options: SoakOptions): Promise<SoakResult> {
  const started = Date.now();
  const { seed } = options;
  const days = options.days ?? 4;
  const result: SoakResult = {
    seed,
    matched: false,
    problems: [],
    workerKills: 0,
    killsMidJob: 0,
    exportKilled: false,
    failedThenRerun: 0,
    tmpLeftovers: 0,
    payments: 0,
    transfers: 0,
    seconds: 0,
  };
  const plan = crashPlan(seed, options.killExport);
  // slow replies stretch the backfill over a few seconds, so that kills land mid-fetch
  const sim = await startSimulator({
    seed,
    days,
    perDay: options.perDay ?? 250,
    organisations: 1,
    clock: 'manual',
    switches: { slowRate: 1, slowMs: plan.slowMs, shape: plan.shape },
  });
  const databaseUrl = benchDatabaseUrl();
  const cwd = await mkdtemp(join(tmpdir(), 'paysync-soak-'));
  const prefix = `paysync-soak-${seed}-${randomBytes(3).toString('hex')}`;
  const env = {
    PAYMENTS_BASE_URL: sim.url,
    PAYMENTS_API_KEY: sim.keys.organisation[sim.organisations[0] as string] as string,
    DATABASE_URL: databaseUrl,
    REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    PAYSYNC_QUEUE_PREFIX: prefix,
    EXPORT_DIR: join(cwd, 'exports'),
    PAGE_SIZE: '10',
    UPSTREAM_RPS: '1000',
    JOB_LOCK: '2s', // a killed worker's windows are taken over within seconds
    LOG_LEVEL: 'error',
  };
  const settings = parseSettings(env);
  let redis: Redis | null = null;
  let queue: Queue<SyncJobData> | null = null;
  const workers: Child[] = [];
  try {
    await migrate(databaseUrl);
    redis = await connectRedis(settings.REDIS_URL, 'paysync-soak');
    queue = createQueue(redis, prefix);
    const ctx: RunContext = { plan, env, cwd, queue, workers, result };
    const now = sim.now().getTime();
    const from = localDayOf(new Date(now - (days + 1) * 86_400_000), 'UTC');
    const to = localDayOf(new Date(now), 'UTC');
    const jobs = planBackfill(settings, settings.sources, from, to, ['payments', 'transfers']);
    await backfillThroughCrashes(ctx, jobs, options.timeoutMs ?? 120_000);
    const day = localDayOf(new Date(now - 86_400_000), 'UTC');
    await exportThroughCrash(ctx, day);
    await check(ctx, sim, databaseUrl, join(env.EXPORT_DIR, day));
  } catch (error) {
    result.problems.push(`run aborted: ${(error as Error).message}`);
  } finally {
    await Promise.all(workers.map(kill));
    if (redis) {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
    }
    await queue?.close();
    await redis?.quit();
    await sim.stop();
    await dropBenchDatabase(databaseUrl).catch(() => undefined);
    await rm(cwd, { recursive: true, force: true });
  }
  result.matched = result.problems.length === 0;
  result.seconds = Math.round((Date.now() - started) / 100) / 10;
  return result;
}

export function describeRun(r: SoakResult): string {
  const facts =
    `${r.payments} payments, ${r.transfers} transfers; ${r.workerKills} worker kill(s) (${r.killsMidJob} mid-job)` +
    `${r.exportKilled ? `, export killed at ${r.exportKilledAt}` : ''}${r.failedThenRerun ? `, ${r.failedThenRerun} failed window(s) re-run` : ''}` +
    `${r.tmpLeftovers ? `, ${r.tmpLeftovers} unreferenced tmp leftover(s)` : ''}; ${r.seconds}s`;
  return `seed ${r.seed}: ${r.matched ? 'matched' : 'NOT matched'} — ${facts}${r.matched ? '' : `\n  ${r.problems.join('\n  ')}`}`;
}
