/**
 * Where a backfill's CPU goes, by process: the worker, the simulator and PostgreSQL (the postmaster's
 * reaped children plus live backends), read from /proc before and after one backfill.
 *   node dist/bench/cpu-split.js [payments]
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { runBackfill, withSimAndDatabase, type BackfillSpec } from './lib/backfill.js';

const TICK = 100; // USER_HZ

function cpuOf(pid: number, children = false): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  const own = Number(f[11]) + Number(f[12]);
  return (own + (children ? Number(f[13]) + Number(f[14]) : 0)) / TICK;
}

function postgresCpu(): number {
  const pids = execFileSync('pgrep', ['-x', 'postgres']).toString().trim().split('\n').map(Number);
  const master = Math.min(...pids);
  return pids.reduce((sum, pid) => {
    try {
      return sum + cpuOf(pid, pid === master);
    } catch {
      return sum;
    }
  }, 0);
}

const payments = Number(process.argv[2] ?? 200_000);
const spec: BackfillSpec = { payments, days: 10, pageSize: 1000, workers: 1, concurrency: 2 };
const children0 = cpuOf(process.pid, true) - cpuOf(process.pid);
let simCpu = 0;
await withSimAndDatabase(spec, async (sim, url) => {
  const pg0 = postgresCpu();
  const sim0 = cpuOf(sim.pid);
  const f = await runBackfill(spec, sim, url);
  simCpu = cpuOf(sim.pid) - sim0;
  process.stdout.write(
    `backfill ${f.seconds.toFixed(1)} s; CPU: simulator ${simCpu.toFixed(1)} s, postgres ${(postgresCpu() - pg0).toFixed(1)} s\n`,
  );
});
const children = cpuOf(process.pid, true) - cpuOf(process.pid) - children0;
process.stdout.write(`worker CPU (start-up included): ${(children - simCpu).toFixed(1)} s\n`);
