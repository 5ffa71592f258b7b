/**
 * Settings are bounded by what the runtime can do with them. Every duration setting is found by asking
 * the schema (a setting that turns `1m` into 60000 is a duration), and each one that feeds a timer
 * refuses a value past Node's timer limit (2^31-1 ms, beyond which a timer fires after 1 ms and a loop
 * spins); the spans that only become dates stop at ten years. UPSTREAM_RPS stays between one request
 * every 1,000 s and 10,000 a second. Each refusal is one line naming the setting; the CLI exits 2.
 */
import { describe, expect, it } from '@jest/globals';
import { MAX_SPAN_MS, MAX_TIMER_MS } from '../../src/config/bounds.js';
import { parseSettings, type Settings } from '../../src/config/settings.js';
import { ConfigError } from '../../src/errors.js';
import { runCli } from '../helpers/cli-run.js';

const VALID = { PAYMENTS_BASE_URL: 'http://127.0.0.1:9', PAYMENTS_API_KEY: 'sk_test_bounds_key' };

/** Spans that are never handed to a timer: they move dates (a lookback, a settle horizon). */
const SPANS = ['SYNC_LOOKBACK', 'SETTLE_HORIZON', 'FUTURE_TOLERANCE'];

function settingNames(): string[] {
  const read = new Set<string>();
  const env = new Proxy({}, { get: (_t, key) => (typeof key === 'string' && read.add(key), undefined) });
  parseSettings(env as NodeJS.ProcessEnv);
  return [...read];
}

/** The settings that read `1m` as 60,000 ms. */
function durationSettings(): string[] {
  return settingNames().filter((name) => {
    try {
      const parsed = parseSettings({ ...VALID, [name]: '1m' }) as unknown as Record<string, unknown>;
      return parsed[name] === 60_000;
    } catch {
      return false;
    }
  });
}

function refusal(env: Record<string, string>): string {
  try {
    parseSettings({ ...VALID, ...env });
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(env)}`);
}

const DURATIONS = durationSettings();

describe('settings bounded by the runtime', () => {
  it('finds the duration settings', () => {
    expect(DURATIONS).toEqual(
      expect.arrayContaining(['SYNC_EVERY', 'JOB_LOCK', 'UPSTREAM_TIMEOUT', ...SPANS]),
    );
  });

  it.each(DURATIONS.filter((n) => !SPANS.includes(n)))('%s: past a timer (2^31 ms) is refused', (name) => {
    const message = refusal({ [name]: `${MAX_TIMER_MS + 1}ms` });
    expect(message).toContain(name);
    expect(message).not.toMatch(/\n/);
  });

  it.each(SPANS)('%s: a span, refused past ten years', (name) => {
    expect(refusal({ [name]: `${MAX_SPAN_MS / 86_400_000 + 1}d` })).toContain(name);
    expect(() => parseSettings({ ...VALID, [name]: `${MAX_SPAN_MS / 86_400_000}d` })).not.toThrow();
  });

  it('UPSTREAM_RPS: from 0.001 to 10,000', () => {
    for (const bad of ['0.0009', '4.7e-7', '1e-300', '0', '10001', 'Infinity'])
      expect(refusal({ UPSTREAM_RPS: bad })).toMatch(/^UPSTREAM_RPS must be a number from 0.001 to 10000/);
    const rate = (text: string) => (parseSettings({ ...VALID, UPSTREAM_RPS: text }) as Settings).UPSTREAM_RPS;
    expect(rate('0.001')).toBe(0.001);
    expect(rate('10000')).toBe(10_000);
  });

  it('the CLI stops on a rate that would overflow the rate gate timer: exit 2, one line', async () => {
    const result = await runCli(['sync', '--once'], {
      ...VALID,
      UPSTREAM_RPS: '0.0000001',
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/paysync_test_bounds_none', // never the shared one
      PAYSYNC_QUEUE_PREFIX: `paysync-test-bounds-${process.pid}`,
    });
    expect(result.status).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringContaining('UPSTREAM_RPS')]);
  });
});
