/**
 * Where a benchmark's CPU goes, by process, read from /proc (Linux): each process's user + system time,
 * all its threads included (V8's GC helpers too). PostgreSQL's is the sum over its processes: the
 * postmaster's reaped children (backends that ended) plus every live one, so connections opened and
 * closed during the measurement still count.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

const CLOCK_TICKS = 100; // USER_HZ on Linux

/** CPU seconds used by `pid` so far (with `children`: plus its reaped children's). NaN when unreadable. */
export function processCpuSeconds(pid: number, children = false): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    const own = Number(fields[11]) + Number(fields[12]);
    return (own + (children ? Number(fields[13]) + Number(fields[14]) : 0)) / CLOCK_TICKS;
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
  postgres: number;
  simulator: number;
}

/** Starts measuring: the returned function gives the CPU each part has used since. */
export function cpuMeter(workerPids: readonly number[], simulatorPid: number): () => CpuSplit {
  const now = (): CpuSplit => ({
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
    };
  };
}

/** One line: each process's CPU, the total, and how busy that kept the machine's cores. */
export function describeCpu(split: CpuSplit, wallSeconds: number): string {
  const total = split.worker + split.postgres + split.simulator;
  const cores = cpus().length;
  const busy = Math.round((100 * total) / (cores * wallSeconds));
  const s = (n: number) => `${n.toFixed(1)} s`;
  return (
    `CPU: worker ${s(split.worker)}, PostgreSQL ${s(split.postgres)}, simulator ${s(split.simulator)}; ` +
    `${s(total)} in ${s(wallSeconds)} of wall time on ${cores} cores (${busy}% busy)`
  );
}
