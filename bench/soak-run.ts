/**
 * One run of the crash soak: a fresh warehouse and simulator, a backfill recorded in PostgreSQL and run by
 * worker processes that are killed with SIGKILL where it hurts most (seeded: between a window's committed
 * rows and its verdict, mid-window, during a transfers full scan; one to three kills, in some runs all on
 * the same point so the same jobs die repeatedly) and replaced, then an export of one day in a child
 * process that is itself killed in some runs and run again. Every kill lands on a named pause point the
 * process announces (src/pause-point.ts), never after a sleep. Nobody re-runs anything by hand: the run
 * matches when the backfill ends done on its own, the warehouse equals the simulator record by record,
 * nothing is doubled, and the day's pack is whole as its manifest names it. `bench/soak.ts` repeats it
 * over seeds; `test/drills/crash-loop.test.ts` runs a short version.
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
import {
  failedItems,
  getBackfill,
  recordBackfill,
  type BackfillRequest,
} from '../src/warehouse/backfill-store.js';
import { enqueueBackfill } from '../jobs/backfill-queue.js';
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
  /** Kills that landed while a job was paused at its point (all of them: a kill waits for the pause). */
  killsMidJob: number;
  /** The pause points the worker kills landed on, in order. */
  killPoints: string[];
  exportKilled: boolean;
  /** The pause point the export was killed at. */
  exportKilledAt?: string;
  /** Re-runs of backfill items beyond one each (the kills' cost), as PostgreSQL counted them. */
  reruns: number;
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

/** Every random choice of a run, drawn up front from its seed, so a run's plan does not depend on timing. */
interface CrashPlan {
  shape: 'wrapper' | 'array';
  /** Where each worker kill lands (one to three kills; named pause points). */
  killPoints: WorkerPausePoint[];
  /** Where the first export attempt is paused and killed (a named pause point); null: it is not killed. */
  exportKillAt: ExportPausePoint | null;
}

/** Where a worker kill hurts most (src/sync/run-work.ts). */
const WORKER_PAUSE_POINTS = ['window:before-verdict', 'window:mid-read', 'scan:page-committed'] as const;
type WorkerPausePoint = (typeof WORKER_PAUSE_POINTS)[number];

/** The export's pause points (src/reconcile/export-day.ts): files written, manifest written, folder renamed. */
const EXPORT_PAUSE_POINTS = ['export:files-written', 'export:before-publish', 'export:after-rename'] as const;
export type ExportPausePoint = (typeof EXPORT_PAUSE_POINTS)[number];

export function crashPlan(seed: number, killExport?: boolean | ExportPausePoint): CrashPlan {
  const rng = mulberry32(mix32(seed, 0x736f616b));
  const draws = Array.from({ length: 8 }, () => rng());
  const [_slow, shape, kills, same, exportAt, ...at] = draws as [
    number,
    number,
    number,
    number,
    number,
    ...number[],
  ];
  const pick = (d: number) => WORKER_PAUSE_POINTS[Math.floor(d * WORKER_PAUSE_POINTS.length)]!;
  // in some runs every kill lands on the same point: the same jobs die again and again
  const killPoints = at
    .slice(0, 1 + Math.floor(kills * 3))
    .map((d) => pick(same < 0.4 ? (at[0] as number) : d));
  const killsExport = killExport ?? exportAt < 0.5;
  return {
    shape: shape < 0.5 ? 'wrapper' : 'array',
    killPoints,
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

async function startWorkerProcess(ctx: RunContext, extraEnv: Record<string, string>): Promise<Child> {
  const before = (await ctx.queue.getWorkers()).length;
  const worker = startChild(
    ['worker', '--no-schedules', '--concurrency', '2'],
    { ...ctx.env, ...extraEnv },
    ctx.cwd,
  );
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

async function backfillState(databaseUrl: string, id: number) {
  const pool = createPool(databaseUrl, { max: 1 });
  try {
    return await getBackfill(pool, id);
  } finally {
    await pool.end();
  }
}

/**
 * Starts a worker that pauses at `point`, and kills it there once it announces it; returns false when the
 * backfill finished first (the point was no longer reachable: every job that passes it is done).
 */
async function killWorkerAt(ctx: RunContext, id: number, point: WorkerPausePoint): Promise<boolean> {
  const worker = await startWorkerProcess(ctx, { PAYSYNC_PAUSE_AT: point });
  let paused = false;
  await waitFor(
    `a worker to pause at ${point}`,
    async () => {
      paused = worker.stderr().includes(`${PAUSE_ANNOUNCEMENT}${point}`);
      return paused || (await backfillState(ctx.env.DATABASE_URL as string, id))?.state !== 'running';
    },
    60_000,
  );
  await kill(worker);
  if (paused) {
    ctx.result.workerKills++;
    ctx.result.killsMidJob++;
    ctx.result.killPoints.push(point);
  }
  return paused;
}

async function backfillThroughCrashes(
  ctx: RunContext,
  jobs: PlannedJob[],
  request: BackfillRequest,
  timeoutMs: number,
) {
  const pool = createPool(ctx.env.DATABASE_URL as string, { max: 1 });
  let id: number;
  try {
    id = (await recordBackfill(pool, request, jobs)).backfill.id;
  } finally {
    await pool.end();
  }
  await enqueueBackfill(ctx.queue, jobs, id);
  for (const point of ctx.plan.killPoints) if (!(await killWorkerAt(ctx, id, point))) break;
  const survivor = await startWorkerProcess(ctx, {});
  await waitFor(
    'the backfill',
    async () => (await backfillState(ctx.env.DATABASE_URL as string, id))?.state !== 'running',
    timeoutMs,
  ).catch(async (error: Error) => {
    // say what was left and what the worker said: a hang must be explainable from the report alone
    const b = await backfillState(ctx.env.DATABASE_URL as string, id);
    const jobs = await ctx.queue.getJobCounts();
    throw new Error(
      `${error.message}: ${b ? `${b.done}/${b.total} done, ${b.running} running, ${b.queued} queued, ${b.runs} runs` : 'no backfill'}; ` +
        `queue ${JSON.stringify(jobs)}; worker stderr: ${survivor.stderr().slice(-1_500)}`,
    );
  });
  const end = await backfillState(ctx.env.DATABASE_URL as string, id);
  ctx.result.reruns = (end?.runs ?? 0) - (end?.total ?? 0);
  if (end?.state !== 'done') {
    const check = createPool(ctx.env.DATABASE_URL as string, { max: 1 });
    const failed = await failedItems(check, id).finally(() => check.end());
    ctx.result.problems.push(
      `backfill ended ${end?.state}: ${failed.map((f) => `${f.label}: ${f.detail}`).join('; ')}`,
    );
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
    killPoints: [],
    exportKilled: false,
    reruns: 0,
    tmpLeftovers: 0,
    payments: 0,
    transfers: 0,
    seconds: 0,
  };
  const plan = crashPlan(seed, options.killExport);
  // no slow replies: every kill lands on a pause point, so nothing needs stretching (the first draw,
  // once the reply delay, is kept so that each seed keeps its plan)
  const sim = await startSimulator({
    seed,
    days,
    perDay: options.perDay ?? 250,
    organisations: 1,
    clock: 'manual',
    switches: { shape: plan.shape },
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
    const streams = ['payments', 'transfers'] as const;
    const jobs = planBackfill(settings, settings.sources, from, to, streams);
    const request = {
      sources: ['default'],
      streams: [...streams],
      fromDay: from,
      toDay: to,
      timeZone: 'UTC',
    };
    await backfillThroughCrashes(ctx, jobs, request, options.timeoutMs ?? 120_000);
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
    `${r.payments} payments, ${r.transfers} transfers; ${r.workerKills} worker kill(s) at ${r.killPoints.join(', ') || '-'}` +
    `, ${r.reruns} item re-run(s)${r.exportKilled ? `, export killed at ${r.exportKilledAt}` : ''}` +
    `${r.tmpLeftovers ? `, ${r.tmpLeftovers} unreferenced tmp leftover(s)` : ''}; ${r.seconds}s`;
  return `seed ${r.seed}: ${r.matched ? 'matched' : 'NOT matched'} — ${facts}${r.matched ? '' : `\n  ${r.problems.join('\n  ')}`}`;
}
