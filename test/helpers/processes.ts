/**
 * Child processes for the deployment tests (containers, promtool, PgBouncer, Redis Cluster): run one to
 * its end, start one and wait for a line it prints, find free ports, and insist on the external tools
 * these tests prove things with (a missing tool fails the test with how to install it, never skips it).
 */
import { spawn, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { createServer } from 'node:net';

export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end and collects its output (never rejects on a non-zero exit). */
export function run(command: string, args: readonly string[], options: SpawnOptions = {}): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

export interface Started {
  child: ChildProcess;
  /** Everything printed so far (stdout and stderr interleaved). */
  output(): string;
  /** Resolves with the first match of `pattern` in the output (already printed or still to come). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves with the exit code (or the signal's name). */
  exited: Promise<number | string>;
  /** SIGTERM, then the exit; SIGKILL if it is still there after `graceMs`. */
  stop(graceMs?: number): Promise<number | string>;
}

export function start(command: string, args: readonly string[], options: SpawnOptions = {}): Started {
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  let text = '';
  const listeners = new Set<() => void>();
  const add = (d: Buffer) => {
    text += d.toString();
    for (const l of listeners) l();
  };
  child.stdout?.on('data', add);
  child.stderr?.on('data', add);
  const exited = new Promise<number | string>((resolve) => {
    child.on('close', (code, signal) => {
      resolve(code ?? signal ?? 'unknown');
      for (const l of listeners) l();
    });
  });
  let done = false;
  void exited.then(() => (done = true));
  const waitFor = (pattern: RegExp, timeoutMs = 60_000) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const timer = setTimeout(() => {
        listeners.delete(check);
        reject(new Error(`${command} did not print ${pattern} within ${timeoutMs} ms; output:\n${text}`));
      }, timeoutMs);
      const check = () => {
        const m = text.match(pattern);
        if (m) {
          clearTimeout(timer);
          listeners.delete(check);
          resolve(m);
        } else if (done) {
          clearTimeout(timer);
          listeners.delete(check);
          reject(new Error(`${command} exited before printing ${pattern}; output:\n${text}`));
        }
      };
      listeners.add(check);
      check();
    });
  const stop = async (graceMs = 20_000) => {
    if (!done) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    const result = await exited;
    clearTimeout(timer);
    return result;
  };
  return { child, output: () => text, waitFor, exited, stop };
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (!address || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/**
 * The path of an external tool these tests need, or an error that says how to get it: the proof rests
 * on the tool, so its absence is a failure (`.ci/run` installs each of them).
 */
export function requireTool(name: string, debianPackage: string): string {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const path = found.stdout.trim();
  if (found.status !== 0 || !path) {
    throw new Error(
      `${name} is not installed, and this test needs it: apt-get install -y ${debianPackage} (.ci/run does this)`,
    );
  }
  return path;
}
