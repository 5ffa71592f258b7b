/**
 * The per-source ceiling holds across processes: two gates on two Redis connections (as two workers
 * would have) grant slots on one timeline, each one interval after the last, so no window of Redis time
 * holds more grants than the ceiling's contract. Assertions are on the grants' own Redis times and slots,
 * never on how fast a gate is, so a slow machine cannot fail these tests.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import {
  CATCH_UP_MICROS,
  ceilingContract,
  createRateGate,
  emissionIntervalMicros,
  type Grant,
  type RateGate,
} from '../../src/sync/rate-gate.js';
import { readRequestPace } from '../../src/sync/request-pace.js';

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

/** The most times (any unit per ms: `perMs`) found in any half-open window [t, t + spanMs). */
function busiestWindow(times: number[], spanMs: number, perMs = 1): number {
  const sorted = [...times].sort((x, y) => x - y);
  let most = 0;
  let j = 0;
  for (let i = 0; i < sorted.length; i++) {
    while ((sorted[i] as number) - (sorted[j] as number) >= spanMs * perMs) j++;
    most = Math.max(most, i - j + 1);
  }
  return most;
}

/** Fires `n` acquires at once, spread round-robin over the gates; returns the grants in grant order. */
async function acquireAll(gates: RateGate[], n: number): Promise<Grant[]> {
  const grants = await Promise.all(
    Array.from({ length: n }, (_, i) => (gates[i % gates.length] as RateGate).acquire()),
  );
  return grants.sort((x, y) => x.atMicros - y.atMicros);
}

describe('rate gate', () => {
  it('two processes sharing a source at 20 rps: each slot follows the last by one interval, never closer', async () => {
    const opts = { prefix, source: 'shared', rps: 20 };
    const grants = await acquireAll([createRateGate(a, opts), createRateGate(b, opts)], 60);
    const interval = emissionIntervalMicros(20);

    expect(grants).toHaveLength(60);
    for (let i = 1; i < grants.length; i++) {
      const previous = grants[i - 1] as Grant;
      const grant = grants[i] as Grant;
      // the timeline's rule: the previous slot plus one interval, unless it lags the clock by more than
      // the catch-up allowance (a slow poll), when it restarts from the clock less that allowance
      expect(grant.slotMicros).toBe(
        Math.max(previous.slotMicros + interval, grant.atMicros - CATCH_UP_MICROS),
      );
      expect(grant.atMicros).toBeGreaterThanOrEqual(grant.slotMicros);
      expect(grant.atMicros - grant.slotMicros).toBeLessThanOrEqual(CATCH_UP_MICROS);
    }
    // so no second of Redis time holds more grants than the ceiling's contract allows
    const { windowMs, most } = ceilingContract(20);
    expect(
      busiestWindow(
        grants.map((g) => g.atMicros),
        windowMs,
        1000,
      ),
    ).toBeLessThanOrEqual(most);
  });

  it('keeps the pace per source for progress: grants per second and the latency the workers reported', async () => {
    const gate = createRateGate(a, { prefix, source: 'paced', rps: 20 });
    await Promise.all(Array.from({ length: 60 }, () => gate.acquire(150)));
    const pace = await readRequestPace(b, prefix, 'paced', 20);

    expect(pace.latencyMs).toBe(150);
    // 60 grants at 20 rps span three seconds of Redis time: complete seconds hold some, within the ceiling
    expect(pace.perSecond).toBeGreaterThan(0);
    expect(pace.perSecond).toBeLessThanOrEqual(ceilingContract(20).most);
    expect(await b.pttl(`${prefix}:rate:paced:pace`)).toBeGreaterThan(0);
  });

  it('holds a fractional rate: 5 requests at 2 rps take at least 2 seconds of Redis time', async () => {
    const gate = createRateGate(a, { prefix, source: 'slow', rps: 2 });
    const grants = await acquireAll([gate], 5);
    const at = grants.map((g) => g.atMicros);

    expect(Math.max(...at) - Math.min(...at)).toBeGreaterThanOrEqual(4 * 500_000 - CATCH_UP_MICROS);
    const { windowMs, most } = ceilingContract(2);
    expect(windowMs).toBe(5000);
    expect(busiestWindow(at, windowMs, 1000)).toBeLessThanOrEqual(most);
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
    expect(emissionIntervalMicros(500)).toBe(2000);
    expect(emissionIntervalMicros(20)).toBe(50_000);
    expect(emissionIntervalMicros(3)).toBe(333_334);
    expect(emissionIntervalMicros(0.5)).toBe(2_000_000);
    // the contract: any second from 5 req/s up, any 5 seconds below, 5% and one request over the rate
    expect(ceilingContract(20)).toEqual({ windowMs: 1000, most: 22 });
    expect(ceilingContract(10)).toEqual({ windowMs: 1000, most: 11 });
    expect(ceilingContract(4)).toEqual({ windowMs: 5000, most: 22 });
    expect(ceilingContract(10_000)).toEqual({ windowMs: 1000, most: 10_501 });
  });
});
