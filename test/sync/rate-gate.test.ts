/**
 * The per-source ceiling holds across processes: two gates on two Redis connections (as two workers
 * would have) never let more than ceil(rps) requests into any 1-second window. Only lower bounds on
 * spacing are asserted — never how fast a gate is — so a slow machine cannot fail these tests.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { createRateGate, emissionIntervalMicros } from '../../src/sync/rate-gate.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `test-rate-${randomUUID()}`;
let a: Redis;
let b: Redis;

beforeAll(() => {
  a = new Redis(REDIS_URL);
  b = new Redis(REDIS_URL);
});

afterAll(async () => {
  const keys = await a.keys(`${prefix}:*`);
  if (keys.length > 0) await a.del(...keys);
  await Promise.all([a.quit(), b.quit()]);
});

/**
 * Timestamps are taken here, when each acquire resolves, not in Redis where the grant happens: the reply
 * latency varies, more so when the machine is loaded. Windows are therefore measured 15 ms short of a
 * second — a tolerance in time, not a spare request: the gate spaces ceil(rps) grants over 1 s + 10 ms
 * at the server, and seen here a few ms of jitter could otherwise show ceil(rps) + 1 in a full second.
 */
const OBSERVATION_JITTER_MS = 15;

/** The most timestamps found in any half-open window [t, t + spanMs). */
function busiestWindow(times: number[], spanMs = 1000 - OBSERVATION_JITTER_MS): number {
  const sorted = [...times].sort((x, y) => x - y);
  let most = 0;
  let j = 0;
  for (let i = 0; i < sorted.length; i++) {
    while ((sorted[i] as number) - (sorted[j] as number) >= spanMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

/** Fires `n` acquires at once, spread round-robin over the gates; returns when each was granted. */
async function acquireAll(gates: Array<{ acquire(): Promise<void> }>, n: number): Promise<number[]> {
  const times: number[] = [];
  const calls = Array.from({ length: n }, (_, i) =>
    (gates[i % gates.length] as { acquire(): Promise<void> }).acquire().then(() => {
      times.push(performance.now());
    }),
  );
  await Promise.all(calls);
  return times;
}

describe('rate gate', () => {
  it('two processes sharing a source at 20 rps never exceed 20 requests in any second', async () => {
    const opts = { prefix, source: 'shared', rps: 20 };
    const times = await acquireAll([createRateGate(a, opts), createRateGate(b, opts)], 60);

    expect(times).toHaveLength(60);
    expect(busiestWindow(times)).toBeLessThanOrEqual(20);
    // 60 grants at least 50 ms apart span at least 59 intervals (less 50 ms of client-side jitter).
    expect(Math.max(...times) - Math.min(...times)).toBeGreaterThanOrEqual(2900);
  });

  it('holds a fractional rate: 5 requests at 2 rps take at least 2 seconds', async () => {
    const gate = createRateGate(a, { prefix, source: 'slow', rps: 2 });
    const times = await acquireAll([gate], 5);

    expect(Math.max(...times) - Math.min(...times)).toBeGreaterThanOrEqual(1950);
    expect(busiestWindow(times)).toBeLessThanOrEqual(2);
  });

  it('keeps sources independent and lets their keys expire', async () => {
    // One request per 100 s: were the sources shared, the second source would wait that long.
    const busy = createRateGate(a, { prefix, source: 'busy', rps: 0.01 });
    const other = createRateGate(b, { prefix, source: 'other', rps: 0.01 });
    await busy.acquire();

    // The 20 s margin only separates "independent" (~1 ms) from "shared" (~100 s); it is no speed test.
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      other.acquire().then(() => 'granted'),
      new Promise((resolve) => (timer = setTimeout(resolve, 20_000, 'blocked'))),
    ]);
    clearTimeout(timer);
    expect(outcome).toBe('granted');
    const ttl = await a.pttl(`${prefix}:rate:busy`);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(101_000);
  });

  it('rejects waiting acquires when its signal aborts', async () => {
    const controller = new AbortController();
    const gate = createRateGate(a, { prefix, source: 'abort', rps: 0.01, signal: controller.signal });
    await gate.acquire();

    const waiting = gate.acquire();
    setTimeout(() => controller.abort(new Error('shutdown')), 50);
    await expect(waiting).rejects.toThrow();
    await expect(gate.acquire()).rejects.toThrow();
  });

  it('refuses a ceiling that is not a positive number', () => {
    expect(() => emissionIntervalMicros(0)).toThrow(/UPSTREAM_RPS/);
    expect(() => emissionIntervalMicros(Number.NaN)).toThrow(/UPSTREAM_RPS/);
    // Whole rates keep a 10 ms allowance per second; fractional ones are already spaced wider.
    expect(emissionIntervalMicros(500)).toBe(2020);
    expect(emissionIntervalMicros(20)).toBe(50_500);
    expect(emissionIntervalMicros(2.5)).toBe(400_000);
    expect(emissionIntervalMicros(0.5)).toBe(2_000_000);
  });
});
