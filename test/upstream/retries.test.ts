/**
 * Retries and failures, over real HTTP against the simulator's fault switches (429, 5xx, resets, slow
 * answers, bodies that are not JSON). Answers the simulator never gives: upstream-local-server.test.ts.
 */
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import {
  isRetryable,
  UpstreamNetworkError,
  UpstreamProtocolError,
  UpstreamRateLimitedError,
  UpstreamServerError,
} from '../../src/errors.js';
import { createLogger } from '../../src/log.js';
import { startSimulator } from '../../src/sim/server.js';
import type { RunningSimulator, SimSwitches } from '../../src/sim/types.js';
import { caught, clientFor, everyRendering, localServer, reply } from '../helpers/upstream.js';

let sim: RunningSimulator;
let key: string;
const calm: Partial<SimSwitches> = {
  rateLimitRate: 0,
  serverErrorRate: 0,
  resetRate: 0,
  slowRate: 0,
  notJsonRate: 0,
};

beforeAll(async () => {
  sim = await startSimulator({ seed: 5, days: 1, perDay: 20, clock: 'manual' });
  key = sim.keys.organisation[sim.organisations[0] as string] as string;
});
afterAll(() => sim.stop());
beforeEach(() => {
  sim.setSwitches({ ...calm, retryAfterSeconds: 0 });
  sim.clearRequestLog();
});

/** A client that records every attempt, and turns `faults` off before attempt `healAt`. */
function observed(faults: Partial<SimSwitches>, healAt = Infinity, extra = {}) {
  const statuses: (number | 'network')[] = [];
  let attempts = 0;
  sim.setSwitches(faults);
  const client = clientFor(sim.url, key, 'organisation', {
    retries: 3,
    beforeRequest: async () => {
      attempts += 1;
      if (attempts === healAt) sim.setSwitches(calm);
    },
    onResponse: (info) => statuses.push(info.status),
    ...extra,
  });
  return { client, statuses, attempts: () => attempts };
}

describe('what can heal is retried, with backoff and bounded', () => {
  it('a 429 then success', async () => {
    const { client, statuses } = observed({ rateLimitRate: 1 }, 2);
    const page = await client.listPayments({ page: 0, size: 5 });
    expect(page.items).toHaveLength(5);
    expect(statuses).toEqual([429, 200]);
  });

  it('waits as long as Retry-After says', async () => {
    const { client } = observed({ rateLimitRate: 1, retryAfterSeconds: 1 }, 2);
    const started = Date.now();
    await client.listTransfers({ page: 0, size: 5 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);
  });

  it('5xx then success, on every endpoint', async () => {
    for (const call of [
      (c: ReturnType<typeof clientFor>) => c.listPayments({ page: 0, size: 5 }),
      (c: ReturnType<typeof clientFor>) => c.listTransfers({ page: 0, size: 5 }),
    ]) {
      const { client, statuses } = observed({ serverErrorRate: 1 }, 3);
      await call(client);
      expect(statuses).toHaveLength(3);
      expect(statuses[2]).toBe(200);
      expect([500, 502, 503]).toContain(statuses[0]);
    }
  });

  it('a connection reset, a body that is not JSON, and a timeout then success', async () => {
    for (const faults of [{ resetRate: 1 }, { notJsonRate: 1 }, { slowRate: 1, slowMs: 400 }]) {
      const { client, statuses } = observed(faults, 2, { timeoutMs: 150 });
      await client.listPayments({ page: 0, size: 5 });
      expect(statuses[1]).toBe(200);
    }
  });

  it('gives up after the configured retries, with the last error and one beforeRequest per attempt', async () => {
    const cases = [
      [{ serverErrorRate: 1 }, UpstreamServerError],
      [{ rateLimitRate: 1 }, UpstreamRateLimitedError],
      [{ resetRate: 1 }, UpstreamNetworkError],
      [{ notJsonRate: 1 }, UpstreamProtocolError],
      [{ slowRate: 1, slowMs: 300 }, UpstreamNetworkError],
    ] as const;
    for (const [faults, type] of cases) {
      sim.clearRequestLog();
      const { client, statuses, attempts } = observed(faults, Infinity, { timeoutMs: 100 });
      const error = await caught(client.listPayments({ page: 0, size: 5 }));
      expect(error).toBeInstanceOf(type);
      expect(isRetryable(error)).toBe(true);
      expect(attempts()).toBe(4);
      expect(statuses).toHaveLength(4);
      expect(everyRendering(error)).not.toContain(key);
      sim.setSwitches(calm);
    }
    expect(
      (
        await caught(
          observed({ slowRate: 1, slowMs: 300 }, Infinity, { timeoutMs: 100 }).client.listTransfers({
            page: 0,
            size: 5,
          }),
        )
      ).message,
    ).toMatch(/timeout/);
  });

  it('initialize is retried after a 429 but never after a 5xx (it could pay twice)', async () => {
    const limited = observed({ rateLimitRate: 1 }, 2);
    await limited.client.initializePayment({ amount: 10, description: 'retry me' });
    expect(limited.statuses).toEqual([429, 201]);
    const failing = observed({ serverErrorRate: 1 });
    await expect(failing.client.initializePayment({ amount: 10, description: 'once' })).rejects.toThrow(
      UpstreamServerError,
    );
    expect(failing.attempts()).toBe(1);
  });
});

describe('what cannot heal fails at once', () => {
  it('401 and 403 are tried once', async () => {
    for (const secret of ['sk_wrong_key_for_test', sim.keys.forbidden]) {
      let n = 0;
      const client = clientFor(sim.url, secret, 'organisation', { beforeRequest: async () => void n++ });
      const error = await caught(client.listTransfers({ page: 0, size: 5 }));
      expect(isRetryable(error)).toBe(false);
      expect(n).toBe(1);
    }
  });

  it('a connection refused is retried, then reported without the key', async () => {
    const server = await localServer((_req, res) => reply(res, 200, []));
    const url = server.url;
    await server.stop();
    let attempts = 0;
    const secret = 'sk_refused_secret_777';
    const client = clientFor(url, secret, 'organisation', {
      retries: 2,
      beforeRequest: async () => void attempts++,
    });
    const error = await caught(client.listTransfers({ page: 0, size: 5 }));
    expect(error).toBeInstanceOf(UpstreamNetworkError);
    expect(error.message).toContain('ECONNREFUSED');
    expect(attempts).toBe(3);
    expect(everyRendering(error)).not.toContain(secret);
  });
});

describe('the key never reaches a log line', () => {
  it('retry warnings name the endpoint and the error, not the key', async () => {
    const out = new PassThrough();
    const lines: string[] = [];
    out.on('data', (chunk: Buffer) => lines.push(chunk.toString()));
    const log = createLogger({ level: 'trace', format: 'json', destination: out });
    const { client } = observed({ serverErrorRate: 1 }, Infinity, { log, retries: 2 });
    await caught(client.listPayments({ page: 0, size: 5 }));
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines.length).toBe(2);
    expect(lines.join('')).toContain('/api/paiements/organisations');
    expect(lines.join('')).not.toContain(key);
  });
});
