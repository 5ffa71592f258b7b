/**
 * Runs the built CLI (bin/paysync.js) as a user would, asynchronously: a test's in-process simulator must
 * keep answering while the command runs (spawnSync would block it).
 */
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import type { Harness } from './sync-harness.js';

const BIN = fileURLToPath(new URL('../../bin/paysync.js', import.meta.url));

export interface CliResult {
  status: number;
  stdout: string;
  stderr: string;
}

/** Runs `paysync ARGS` in `cwd` (default: the temporary directory, where no `.env` of the project's is). */
export function runCli(args: string[], env: Record<string, string>, cwd = tmpdir()): Promise<CliResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd, env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8', timeout: 120_000 },
      (error, stdout, stderr) => {
        const code = (error as { code?: unknown } | null)?.code;
        resolve({ status: typeof code === 'number' ? code : error ? -1 : 0, stdout, stderr });
      },
    );
  });
}

/** The settings of a harness, as the environment of a CLI run against the same stack. */
export function harnessEnv(h: Harness, extra: Record<string, string> = {}): Record<string, string> {
  const s = h.settings;
  return {
    PAYMENTS_BASE_URL: h.sim.url,
    PAYMENTS_API_KEY: h.key,
    DATABASE_URL: h.databaseUrl,
    PAYSYNC_QUEUE_PREFIX: h.prefix,
    REPORT_TIMEZONE: s.REPORT_TIMEZONE,
    EXPORT_DIR: s.EXPORT_DIR,
    PAGE_SIZE: String(s.PAGE_SIZE),
    UPSTREAM_RPS: '2000',
    LOG_FORMAT: 'json',
    ...extra,
  };
}
