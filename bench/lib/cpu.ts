/**
 * Where a benchmark's CPU goes, by process, read from /proc (Linux): each process's user + system time,
 * all its threads included (V8's GC helpers too). PostgreSQL's is the sum over its processes: the
 * postmaster's reaped children (backends that ended) plus every live one, so connections opened and
 * closed during the measurement still count.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import pg from 'pg';

const CLOCK_TICKS = 100; // USER_HZ on Linux

/** CPU seconds of a `/proc/…/stat` file (with `children`: plus the reaped children's). NaN when unreadable. */
function statCpuSeconds(path: string, children: boolean): number {
  try {
    const fields = readFileSync(path, 'utf8').split(') ')[1]?.split(' ') ?? [];
    const own = Number(fields[11]) + Number(fields[12]);
    return (own + (children ? Number(fields[13]) + Number(fields[14]) : 0)) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}

/** CPU seconds used by `pid` so far (with `children`: plus its reaped children's). NaN when unreadable. */
export function processCpuSeconds(pid: number, children = false): number {
  return statCpuSeconds(`/proc/${pid}/stat`, children);
}

/** CPU seconds used so far by one thread `tid` of process `pid` (its main thread: `tid` = `pid`). */
export function threadCpuSeconds(pid: number, tid: number): number {
  return statCpuSeconds(`/proc/${pid}/task/${tid}/stat`, false);
}

/**
 * Seconds one thread has spent so far ready to run but waiting for a core (the run queue's wait in
 * `/proc/…/schedstat`, Linux with schedstats); NaN when unreadable.
 */
export function threadWaitSeconds(pid: number, tid: number): number {
  try {
    const waited = readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[1];
    return Number(waited) / 1e9;
  } catch {
    return NaN;
  }
}

/** CPU seconds used so far by the local PostgreSQL server's processes (NaN if none is found). */
export function postgresCpuSeconds(): number {
  let pids: number[];
  try {
    pids = execFileSync('pgrep', ['-x', 'postgres']).toString().trim().split('\n').map(Number);
  } catch {
    return NaN;
  }
  const postmaster = Math.min(...pids);
  return pids.reduce((sum, pid) => sum + (processCpuSeconds(pid, pid === postmaster) || 0), 0);
}

export interface CpuSplit {
  worker: number;
  /** Every PostgreSQL process of the machine (other work on a shared server counts too). */
  postgres: number;
  simulator: number;
  /** Only the backends connected to the benchmark's own database (NaN when not sampled). */
  postgresOwn: number;
}

/**
 * CPU of the PostgreSQL backends connected to one database, however many open and close: the caller
 * samples (`sample()`, every ~100 ms) which backends serve it (pg_stat_activity) and their CPU so far; a
 * backend's CPU is counted from when it was first seen (new ones from their start). What a backend uses
 * after its last sample before it exits, and the server's shared helpers (WAL writer, checkpointer), are
 * not counted; on a machine shared with other PostgreSQL work this is still the truer figure.
 */
export class DatabaseCpu {
  private readonly first = new Map<number, number>();
  private readonly last = new Map<number, number>();

  constructor(private readonly pids: () => Promise<number[]>) {}

  async sample(initial = false): Promise<void> {
    for (const pid of await this.pids()) {
      const used = processCpuSeconds(pid);
      if (!Number.isFinite(used)) continue;
      if (!this.first.has(pid)) this.first.set(pid, initial ? used : 0);
      this.last.set(pid, used);
    }
  }

  seconds(): number {
    let sum = 0;
    for (const [pid, used] of this.last) sum += used - (this.first.get(pid) ?? 0);
    return sum;
  }
}

/** Starts measuring: the returned function gives the CPU each part has used since. */
export function cpuMeter(workerPids: readonly number[], simulatorPid: number): () => CpuSplit {
  const now = (): Omit<CpuSplit, 'postgresOwn'> => ({
    worker: workerPids.reduce((sum, pid) => sum + processCpuSeconds(pid), 0),
    postgres: postgresCpuSeconds(),
    simulator: processCpuSeconds(simulatorPid),
  });
  const start = now();
  return () => {
    const end = now();
    return {
      worker: end.worker - start.worker,
      postgres: end.postgres - start.postgres,
      simulator: end.simulator - start.simulator,
      postgresOwn: NaN,
    };
  };
}

/** One line: each process's CPU, the total, and how busy that kept the machine's cores. */
export function describeCpu(split: CpuSplit, wallSeconds: number): string {
  const total = split.worker + split.postgres + split.simulator;
  const cores = cpus().length;
  const busy = Math.round((100 * total) / (cores * wallSeconds));
  const s = (n: number) => `${n.toFixed(1)} s`;
  const own = Number.isFinite(split.postgresOwn)
    ? ` (its own database's backends ${s(split.postgresOwn)})`
    : '';
  return (
    `CPU: worker ${s(split.worker)}, PostgreSQL ${s(split.postgres)}${own}, simulator ${s(split.simulator)}; ` +
    `${s(total)} in ${s(wallSeconds)} of wall time on ${cores} cores (${busy}% busy)`
  );
}

/**
 * Runs `work` while sampling, every `everyMs`, the CPU of the PostgreSQL backends connected to
 * `databaseUrl`'s database (DatabaseCpu; the sampling connection goes to the `postgres` database, so it
 * is not counted).
 */
export async function withDatabaseCpu<T>(
  databaseUrl: string,
  work: () => Promise<T>,
  everyMs = 100,
): Promise<{ result: T; postgresOwn: number }> {
  const database = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  const meter = new DatabaseCpu(async () => {
    const { rows } = await client.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE datname = $1',
      [database],
    );
    return rows.map((r) => r.pid);
  });
  let sampling = Promise.resolve();
  const timer = setInterval(() => {
    sampling = sampling.then(() => meter.sample()).catch(() => undefined);
  }, everyMs);
  try {
    await meter.sample(true);
    const result = await work();
    clearInterval(timer);
    await sampling;
    await meter.sample();
    return { result, postgresOwn: meter.seconds() };
  } finally {
    clearInterval(timer);
    await sampling;
    await client.end();
  }
}
