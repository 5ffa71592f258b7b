/**
 * The benchmark's processes: the simulator and paysync workers each run as their own OS process, as in
 * production, so that one's CPU and memory never hide in another's. Peak RSS is the kernel's own
 * high-water mark (VmHWM in /proc/PID/status), read just before the process is stopped.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

const BIN = new URL('../../../bin/paysync.js', import.meta.url).pathname;

export interface Proc {
  pid: number;
  /** Peak resident memory so far, in MB. */
  peakRssMb(): number;
  stop(): Promise<void>;
}

function peakRssMb(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : NaN;
  } catch {
    return NaN;
  }
}

function wrap(child: ChildProcess): Proc {
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    pid: child.pid as number,
    peakRssMb: () => peakRssMb(child.pid as number),
    async stop() {
      if (child.exitCode === null) child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export interface SimProc extends Proc {
  url: string;
}

/** Starts `paysync sim` and resolves with its address once it prints its start-up line. */
export async function startSimProcess(args: string[]): Promise<SimProc> {
  const child = spawn(process.execPath, [BIN, 'sim', '--port', '0', ...args], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(out);
      if (m) resolve(m[1] as string);
    });
    child.once('exit', (code) => reject(new Error(`simulator exited (${code}) before listening: ${out}`)));
  });
  return { ...wrap(child), url };
}

export function startWorkerProcess(env: NodeJS.ProcessEnv, concurrency: number): Proc {
  // BENCH_CPU_PROF=DIR writes each worker's CPU profile there (node --cpu-prof), for the profile-first rule.
  const profile = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
    : [];
  const args = [...profile, BIN, 'worker', '--no-schedules', '--concurrency', String(concurrency)];
  // The worker runs as docs/operations.md advises: with a bounded V8 heap (WORKER_NODE_OPTIONS),
  // so that its memory stays flat however large the backfill (V8 otherwise grows the heap lazily).
  const nodeOptions = process.env.WORKER_NODE_OPTIONS ?? '--max-old-space-size=128';
  const child = spawn(process.execPath, args, {
    env: { ...process.env, ...env, NODE_OPTIONS: nodeOptions },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  return wrap(child);
}
