/**
 * What a rate-ceiling test needs from the service: a fixed latency on every list request, a request log
 * that gives the busiest sliding window, and a service-side rate limit that answers 429 once a client
 * goes over it.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { maxRequestsInWindow, requestsBetween } from '../../src/sim/request-log.js';
import { startSimulator } from '../../src/sim/server.js';
import type { RunningSimulator } from '../../src/sim/types.js';
import { INIT, ORG, TRANSFERS, firstOrg, get } from '../helpers/sim-http.js';

const at = (...times: number[]) => times.map((receivedAt) => ({ receivedAt }));

describe('counting a request log (pure)', () => {
  it('the most requests in any window [t, t + ms), whatever the order of the log', () => {
    const log = at(1600, 0, 500, 990, 1000, 1400, 5000);
    expect(maxRequestsInWindow(log, 1000)).toBe(4);
    expect(maxRequestsInWindow(log, 10)).toBe(1);
    expect(maxRequestsInWindow(log, 11)).toBe(2);
    expect(maxRequestsInWindow(log, 10_000)).toBe(7);
    expect(maxRequestsInWindow([], 1000)).toBe(0);
  });

  it('the requests in a span [from, to), or from a time on', () => {
    const log = at(0, 500, 990, 1000, 1400);
    expect(requestsBetween(log, 500, 1000)).toBe(2);
    expect(requestsBetween(log, 990, null)).toBe(3);
  });
});

describe('over HTTP', () => {
  let sim: RunningSimulator;
  let key: string;

  beforeAll(async () => {
    sim = await startSimulator({ seed: 4, now: new Date('2024-06-15T12:00:00.000Z'), days: 1, perDay: 10 });
    key = firstOrg(sim).key;
  });
  afterAll(() => sim.stop());

  it('latencyMs delays every answered list request, not initialize', async () => {
    sim.setSwitches({ latencyMs: 150 });
    sim.clearRequestLog();
    expect((await get(sim, ORG, key)).status).toBe(200);
    expect((await get(sim, TRANSFERS, key)).status).toBe(200);
    const init = { method: 'POST', headers: { 'X-API-Key': key }, body: '{"amount":5,"description":"x"}' };
    expect((await fetch(`${sim.url}${INIT}`, init)).status).toBe(201);
    expect(sim.requestLog().map((e) => e.delayedMs)).toEqual([150, 150, 0]);
    sim.setSwitches({ latencyMs: 0 });
  });

  it('rateLimitRps: 429 with Retry-After once more than the limit arrived in the trailing window', async () => {
    // 0.05 req/s over a minute: three requests allowed, whatever the machine's speed. A fresh simulator:
    // the limiter counts every arrival, also those before it was switched on.
    const limited = await startSimulator({
      seed: 4,
      switches: { rateLimitRps: 0.05, rateLimitWindowMs: 60_000, retryAfterSeconds: 2 },
    });
    const answers = [];
    for (let i = 0; i < 5; i++) {
      const res = await get(limited, ORG, firstOrg(limited).key);
      answers.push([res.status, res.headers.get('retry-after')]);
    }
    const log = [...limited.requestLog()];
    const counts = (await (await fetch(`${limited.url}/__sim/requests?windowMs=60000`)).json()) as {
      busiest: unknown;
    };
    limited.setSwitches({ rateLimitRps: null });
    expect((await get(limited, ORG, firstOrg(limited).key)).status).toBe(200);
    await limited.stop();
    expect(answers).toEqual([
      [200, null],
      [200, null],
      [200, null],
      [429, '2'],
      [429, '2'],
    ]);
    expect(maxRequestsInWindow(log, 60_000)).toBe(5);
    expect(counts.busiest).toEqual({ windowMs: 60_000, requests: 5 });
  });

  it('the log is readable and clearable over the control routes', async () => {
    await get(sim, ORG, key);
    const log = (await (await fetch(`${sim.url}/__sim/log`)).json()) as { receivedAt: number }[];
    expect(log.length).toBe(sim.requestLog().length);
    expect((await fetch(`${sim.url}/__sim/clear-log`, { method: 'POST', body: '{}' })).status).toBe(200);
    expect(sim.requestLog()).toEqual([]);
  });
});
