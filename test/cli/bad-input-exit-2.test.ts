/**
 * Settings and arguments that a plain check would pass and that would break at run time stop the command
 * at once: exit 2, one line naming what is wrong, no stack trace. And the backfill's range is kept within
 * what exists (1970 to today) and asks for --yes beyond BACKFILL_MAX_DAYS.
 */
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { backfillRange } from '../../src/cli/args.js';
import { latestToday } from '../../src/config/bounds.js';

const BIN = fileURLToPath(new URL('../../bin/paysync.js', import.meta.url));
const VALID = { PAYMENTS_BASE_URL: 'http://127.0.0.1:9', PAYMENTS_API_KEY: 'sk_test_bounds' };

function run(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, [BIN, ...args], {
    cwd: tmpdir(),
    env: { PATH: process.env.PATH ?? '', ...VALID, REDIS_URL: 'redis://127.0.0.1:1', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  const lines = result.stderr.split('\n').filter((line) => line.trim() !== '');
  return { status: result.status, lines, stderr: result.stderr, stdout: result.stdout };
}

const future = latestToday(new Date(Date.now() + 3 * 86_400_000));

describe('one line and exit 2', () => {
  it.each([
    [
      'UPSTREAM_TIMEOUT=25d (past what a timer takes)',
      { UPSTREAM_TIMEOUT: '25d' },
      /UPSTREAM_TIMEOUT must be at most 10m/,
    ],
    ['JOB_LOCK=50d', { JOB_LOCK: '50d' }, /JOB_LOCK must be at most 1h/],
    ['SYNC_EVERY=30d', { SYNC_EVERY: '30d' }, /SYNC_EVERY must be at most/],
    [
      'SETTLE_HORIZON beyond ten years',
      { SETTLE_HORIZON: '99999999999d' },
      /SETTLE_HORIZON must be at most 3650d/,
    ],
    [
      'SYNC_START=2026-02-30',
      { SYNC_START: '2026-02-30' },
      /SYNC_START 2026-02-30 is not a day on the calendar/,
    ],
    ['SYNC_START=1970-01-01', { SYNC_START: '1970-01-01' }, /SYNC_START 1970-01-01 is before 1970-01-03/],
    ['SYNC_START in the future', { SYNC_START: future }, /SYNC_START .* is in the future/],
    ['UPSTREAM_MAX_BODY=1TB', { UPSTREAM_MAX_BODY: '1TB' }, /UPSTREAM_MAX_BODY must be a size/],
    [
      'an API key with a trailing space',
      { PAYMENTS_API_KEY: 'sk_test_bounds ' },
      /PAYMENTS_API_KEY has spaces/,
    ],
    [
      'an API key with a control character',
      { PAYMENTS_API_KEY: 'sk_te\u0007st' },
      /PAYMENTS_API_KEY contains a control/,
    ],
    [
      'a base URL with a password',
      { PAYMENTS_BASE_URL: 'http://user:pass@127.0.0.1:9' },
      /PAYMENTS_BASE_URL must not carry a user name or password/,
    ],
  ])('%s', (_, env, message) => {
    const r = run(['status'], env);
    expect(r.status).toBe(2);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(message);
    expect(r.stderr).not.toContain('pass@');
    expect(r.stderr).not.toMatch(/\bat .+:\d+:\d+/);
  });

  it.each([
    [
      'export --day 2026-02-30',
      ['export', '--day', '2026-02-30'],
      /--day 2026-02-30 is not a day on the calendar/,
    ],
    [
      'backfill from 1900',
      ['backfill', '--from', '1900-01-01', '--to', '1900-01-02'],
      /--from 1900-01-01 is before 1970-01-03/,
    ],
    [
      'backfill from a future day',
      ['backfill', '--from', future, '--to', future],
      /--from .* is in the future/,
    ],
    [
      'backfill of 1970 to today without --yes',
      ['backfill', '--from', '1970-01-03', '--to', '2100-12-31'],
      /covers \d+ days, more than BACKFILL_MAX_DAYS \(366\); .*--yes/,
    ],
  ])('%s', (_, args, message) => {
    const r = run(args);
    expect(r.status).toBe(2);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(message);
  });

  it('a dry run to 2100 clamps --to to today and says so', () => {
    const r = run([
      'backfill',
      '--from',
      '2025-06-01',
      '--to',
      '2100-12-31',
      '--dry-run',
      '--stream',
      'payments',
    ]);
    expect(r.status).toBe(0);
    expect(r.lines[0]).toMatch(/--to 2100-12-31 is in the future: the backfill stops at today/);
    expect(r.stdout).toMatch(/job\(s\) over \d+ day\(s\)/);
  });
});

describe('backfillRange', () => {
  it('clamps a future --to, refuses a reversed range, and asks for --yes past the maximum', () => {
    expect(
      backfillRange({ from: '2026-01-01', to: '2026-12-31', yes: false, dryRun: false }, '2026-03-01', 366),
    ).toEqual({
      from: '2026-01-01',
      to: '2026-03-01',
      days: 60,
      notes: ['--to 2026-12-31 is in the future: the backfill stops at today, 2026-03-01'],
    });
    expect(() =>
      backfillRange({ from: '2026-02-02', to: '2026-02-01', yes: false, dryRun: false }, '2026-03-01', 366),
    ).toThrow(/after --to/);
    expect(() =>
      backfillRange({ from: '2020-01-01', to: '2026-01-01', yes: false, dryRun: false }, '2026-03-01', 366),
    ).toThrow(/--yes/);
    expect(
      backfillRange({ from: '2020-01-01', to: '2026-01-01', yes: true, dryRun: false }, '2026-03-01', 366)
        .days,
    ).toBe(2193);
  });
});
