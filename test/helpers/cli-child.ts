/**
 * paysync CLI child processes for drills: `bin/paysync.js` with the harness's settings as environment,
 * output captured, and waits on what a child prints (an observed event, never a sleep).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Harness } from './sync-harness.js';

export interface CliChild {
  process: ChildProcess;
  exited: Promise<number | null>;
  stdout(): string;
  stderr(): string;
  /**
   * Resolves once the child has printed `text` on stderr, after its first `after` characters (default: at
   * any point); rejects when it exits first or after timeoutMs.
   */
  waitForStderr(text: string, timeoutMs?: number, after?: number): Promise<void>;
  kill(): Promise<void>;
}

/** The environment a child needs to reach the harness's simulator, database and queue. */
export function harnessEnv(h: Harness, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '',
    PAYMENTS_BASE_URL: h.sim.url,
    PAYMENTS_API_KEY: h.key,
    DATABASE_URL: h.databaseUrl,
    REDIS_URL: h.settings.REDIS_URL,
    PAYSYNC_QUEUE_PREFIX: h.prefix,
    PAGE_SIZE: String(h.settings.PAGE_SIZE),
    UPSTREAM_RPS: String(h.settings.UPSTREAM_RPS),
    REPORT_TIMEZONE: h.settings.REPORT_TIMEZONE,
    LOG_LEVEL: 'warn',
    ...extra,
  };
}

export function startCli(args: string[], env: Record<string, string>): CliChild {
  const child = spawn(process.execPath, ['bin/paysync.js', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  const watchers: Array<() => void> = [];
  child.stdout?.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr?.on('data', (c: Buffer) => {
    err += c.toString();
    for (const w of [...watchers]) w();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    process: child,
    exited,
    stdout: () => out,
    stderr: () => err,
    waitForStderr(text, timeoutMs = 60_000, after = 0) {
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(
          () => finish(new Error(`no "${text}" within ${timeoutMs} ms: ${err.slice(-2_000)}`)),
          timeoutMs,
        );
        const check = () => {
          if (err.includes(text, after)) finish();
        };
        const finish = (error?: Error) => {
          clearTimeout(timer);
          if (watchers.includes(check)) watchers.splice(watchers.indexOf(check), 1);
          child.off('exit', onExit);
          if (error) reject(error);
          else resolve();
        };
        const onExit = () => finish(new Error(`exited before printing "${text}": ${err.slice(-2_000)}`));
        watchers.push(check);
        child.once('exit', onExit);
        check();
      });
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}
