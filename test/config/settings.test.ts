/**
 * Bad settings fail loud (exit 2 "with one clear line naming the setting", docs/operations.md). The settings are
 * not hand-listed: the test records which variables parseSettings reads, which are exactly the schema's
 * keys, and tries generic wrong values on each.
 */
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseSettings } from '../../src/config/settings.js';
import { ConfigError } from '../../src/errors.js';

const VALID: Record<string, string> = {
  PAYMENTS_BASE_URL: 'http://127.0.0.1:9',
  PAYMENTS_API_KEY: 'sk_test_settings',
};

/** Every setting parseSettings looks up, in its order (it reads each schema key from the environment). */
function settingNames(): string[] {
  const read: string[] = [];
  const env = new Proxy(
    {},
    {
      get(_target, key) {
        if (typeof key === 'string') read.push(key);
        return undefined;
      },
    },
  );
  parseSettings(env as NodeJS.ProcessEnv);
  return [...new Set(read)];
}

/** Values that are wrong for some kind of setting: text, negative, zero, empty, a missing file, huge, a file where a directory is due. */
const CANDIDATES = [
  'not a valid value!',
  '-1',
  '0',
  '',
  '/nonexistent/paysync.json',
  '99999999999',
  '/dev/null',
];

/** The first candidate that parseSettings refuses for this setting, with its error. */
function refusal(name: string): { value: string; error: unknown } | null {
  for (const value of CANDIDATES) {
    try {
      parseSettings({ ...VALID, [name]: value });
    } catch (error) {
      return { value, error };
    }
  }
  return null;
}

const NAMES = settingNames();

describe('settings', () => {
  it('reads a known list of settings (the schema)', () => {
    expect(NAMES.length).toBeGreaterThan(20);
    expect(NAMES).toEqual(
      expect.arrayContaining(['SYNC_EVERY', 'REDIS_URL', 'UPSTREAM_RPS', 'EXPORT_DIR', 'METRICS_HOST']),
    );
  });

  it.each(NAMES)('%s: a wrong value is refused with one line naming it', expectRefused);

  it('the CLI exits 2 with a single stderr line naming SYNC_EVERY, no stack trace', () => {
    const bin = fileURLToPath(new URL('../../bin/paysync.js', import.meta.url));
    const result = spawnSync(process.execPath, [bin, 'status'], {
      cwd: tmpdir(), // no .env file of the project's
      env: { PATH: process.env.PATH ?? '', SYNC_EVERY: 'every five minutes' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(result.status).toBe(2);
    const lines = result.stderr.split('\n').filter((line) => line.trim() !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('SYNC_EVERY');
    expect(result.stderr).not.toMatch(/\bat .+:\d+:\d+/); // no stack frame
  });
});

function expectRefused(name: string): void {
  const refused = refusal(name);
  expect(refused).not.toBeNull();
  const { error } = refused!;
  expect(error).toBeInstanceOf(ConfigError);
  const message = (error as Error).message;
  expect(message).not.toMatch(/\n/);
  expect(message).toContain(name);
}
