/**
 * The in-flight limit: sized from the rate ceiling and the service's latency, halved when the service
 * pushes back (429, Retry-After) and grown back afterwards, one request per round of answers. The
 * decisions are pure (the clock is the test's); the last test runs the limit in front of a real
 * simulator that answers 429 and checks, on the permits it let out, that the 429 shrank the count.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { InFlightLimit, InFlightWindow } from '../../src/sync/in-flight.js';
import { createRateGate } from '../../src/sync/rate-gate.js';
import { createRequestPacer, jobsToFill } from '../../src/sync/request-pacer.js';
import { startSimulator } from '../../src/sim/server.js';
import { clientFor } from '../helpers/upstream.js';
import { firstOrg } from '../helpers/sim-http.js';

const ok = (ms: number) => ({ status: 200, ms });

/** Feeds `n` answers of `ms` each, with the limit full (as many in flight as it allows). */
function answer(limit: InFlightLimit, n: number, ms: number, clock: { now: number }): void {
  for (let i = 0; i < n; i++) {
    clock.now += 10;
    limit.observe(ok(ms), limit.limit, clock.now);
  }
}

describe('the in-flight limit (pure)', () => {
  it('grows to the rate times the latency, a quarter more, plus one', () => {
    const clock = { now: 0 };
    const limit = new InFlightLimit({ rps: 20, initial: 2, max: 64 });
    answer(limit, 30, 500, clock);
    // 20 req/s × 0.5 s = 10 in flight, 12.5 with a quarter more: 13, plus one
    expect(limit.target()).toBe(14);
    expect(limit.limit).toBe(14);
    answer(limit, 30, 500, clock);
    expect(limit.limit).toBe(14);
  });

  it('does not grow while it is not in use, nor while answers slow down (requests queue)', () => {
    const clock = { now: 0 };
    const idle = new InFlightLimit({ rps: 20, initial: 2, max: 64 });
    for (let i = 0; i < 30; i++) idle.observe(ok(500), 1, (clock.now += 10));
    expect(idle.limit).toBe(2);

    const queueing = new InFlightLimit({ rps: 10_000, initial: 2, max: 64 });
    answer(queueing, 1, 10, clock); // the quickest answer: 10 ms
    answer(queueing, 30, 60, clock); // then every answer six times slower
    expect(queueing.limit).toBeLessThanOrEqual(4);
    expect(queueing.target()).toBe(64);
  });

  it('comes down, to two, while answers queue (a service or a process that more requests only slow)', () => {
    const clock = { now: 0 };
    const limit = new InFlightLimit({ rps: 10_000, initial: 4, max: 64 });
    answer(limit, 1, 10, clock);
    // every answer six times the quickest (within the 50 answers the quickest is kept for)
    answer(limit, 30, 60, clock);
    expect(limit.limit).toBe(2);
  });

  it('halves on a 429 once per answer time, holds through Retry-After, then grows back one per round', () => {
    const clock = { now: 0 };
    const limit = new InFlightLimit({ rps: 20, initial: 2, max: 64 });
    answer(limit, 30, 500, clock);
    expect(limit.limit).toBe(14);

    limit.observe({ status: 429, ms: 5, retryAfterMs: 2_000 }, 14, (clock.now += 1));
    limit.observe({ status: 429, ms: 5, retryAfterMs: 2_000 }, 14, (clock.now += 1)); // same burst
    expect(limit.limit).toBe(7);
    expect(limit.shrinks).toBe(1);

    answer(limit, 20, 500, clock); // 200 ms later: still inside the 2 s the service asked for
    expect(limit.limit).toBe(7);

    clock.now += 2_000;
    answer(limit, 8, 500, clock); // a round of answers: one request more
    expect(limit.limit).toBe(8);
    answer(limit, 200, 500, clock);
    expect(limit.limit).toBe(14);

    for (let i = 0; i < 10; i++) limit.observe({ status: 429, ms: 5 }, 14, (clock.now += 1_000));
    expect(limit.limit).toBe(1); // never under one
  });

  it('shrinks towards a lower target when the service gets quicker', () => {
    const clock = { now: 0 };
    const limit = new InFlightLimit({ rps: 20, initial: 2, max: 64 });
    answer(limit, 30, 500, clock);
    answer(limit, 200, 50, clock); // the quickest recent answer is now 50 ms: 20 × 0.05 × 1.25 + 1 = 3
    expect(limit.target()).toBe(3);
    expect(limit.limit).toBe(3);
  });

  it('lets out no more permits than the limit, oldest waiter first', async () => {
    const limit = new InFlightLimit({ rps: 20, initial: 2, max: 64 });
    const window = new InFlightWindow(limit, () => 0);
    const order: number[] = [];
    const first = await window.acquire();
    const second = await window.acquire();
    const waiting = [1, 2, 3].map((n) =>
      window.acquire().then((release) => {
        order.push(n);
        return release;
      }),
    );
    await Promise.resolve();
    expect(window.inFlight).toBe(2);
    expect(order).toEqual([]);
    first(null);
    const third = await waiting[0];
    expect(order).toEqual([1]);
    second(null);
    third?.(null);
    await Promise.all(waiting);
    expect(order).toEqual([1, 2, 3]);
    expect(window.peak).toBe(2);
  });

  it("a worker runs enough jobs for its sources' limits, never fewer than configured nor more than 64", () => {
    const pacer = (n: number) => ({ window: { control: { limit: n } } }) as never;
    expect(jobsToFill([], 2)).toBe(2);
    expect(jobsToFill([pacer(2)], 2)).toBe(4);
    expect(jobsToFill([pacer(8), pacer(2)], 2)).toBe(14);
    expect(jobsToFill([pacer(64)], 2)).toBe(64);
    expect(jobsToFill([pacer(1)], 8)).toBe(8);
  });
});

describe('the in-flight limit in front of a service that answers 429', () => {
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  const prefix = `test-inflight-${randomUUID()}`;
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    await redis.quit();
  });

  it('a 429 shrinks the in-flight count, for good within a round of answers', async () => {
    // The service allows 3 requests a second; paysync's ceiling is 50 and it starts with 8 in flight.
    const sim = await startSimulator({
      seed: 5,
      days: 1,
      perDay: 20,
      switches: { latencyMs: 20, rateLimitRps: 3, retryAfterSeconds: 1 },
    });
    try {
      const gate = createRateGate(redis, { prefix, source: 'limited', rps: 50 });
      const pacer = createRequestPacer(gate, { rps: 50, initial: 8 });
      const client = clientFor(sim.url, firstOrg(sim).key, 'organisation', {
        beforeRequest: () => pacer.beforeRequest(),
        retries: 8,
        backoff: { baseMs: 5, maxMs: 20, maxRetryAfterMs: 5_000 },
      });
      const { control } = pacer.window;
      let shrunkTo: number | null = null;
      const reader = async () => {
        for (let i = 0; i < 2; i++) {
          await client.listPayments({ page: 0, size: 5 });
          if (shrunkTo === null && control.shrinks > 0) {
            shrunkTo = control.limit;
            pacer.window.resetPeak();
          }
        }
      };
      await Promise.all(Array.from({ length: 8 }, reader));

      const statuses = sim.requestLog().map((e) => e.status);
      expect(statuses).toContain(429);
      expect(control.shrinks).toBeGreaterThanOrEqual(1);
      expect(shrunkTo).not.toBeNull();
      expect(shrunkTo as unknown as number).toBeLessThanOrEqual(4);
      // After the first halving, fewer requests than the 8 of before were ever out at once: the limit only
      // grows back by one per round of answers, and after 4 → 8 would take 4 + 5 + 6 + 7 = 22 answers, more
      // than the 16 requests of this test.
      expect(pacer.window.peak).toBeLessThan(8);
    } finally {
      await sim.stop();
    }
  });
});
