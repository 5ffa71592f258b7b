/**
 * The per-source request ceiling (`UPSTREAM_RPS`), shared by every worker process on one Redis
 * (docs/architecture.md, principle 6: scale out, and the ceiling still holds).
 *
 * GCRA with a burst of one: a request is granted only when the server clock has reached the bucket's
 * theoretical arrival time (TAT), which then moves to `now + interval` (1/rps, slightly widened: see
 * emissionIntervalMicros). Grants are therefore at least that far apart in Redis server time, so any
 * 1-second window holds at most ceil(rps) of them — strict
 * even for fractional rates (0.5 rps: one request every 2 s). A larger burst would let a window hold
 * up to twice the ceiling at its edges, which is what the upstream's own limiter would punish.
 *
 * Why check-and-retry rather than "reserve a slot and sleep until it": a reservation lets the request go
 * out at a time measured on the caller's clock, where network and timer jitter can squeeze two requests
 * closer than 1/rps. Granting at the moment of the request keeps the spacing true at the server.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { ConfigError } from '../errors.js';

export interface RateGate {
  /** Resolves when the caller may send one request; rejects when the gate's signal aborts. */
  acquire(): Promise<void>;
}

export interface RateGateOptions {
  /** Key prefix (`PAYSYNC_QUEUE_PREFIX`): gates under one prefix share their ceilings. */
  prefix: string;
  source: string;
  /** Requests per second for this source across all processes; may be fractional. */
  rps: number;
  /** Aborts pending and future acquires (shutdown). */
  signal?: AbortSignal;
}

/**
 * KEYS[1]  the bucket, `${prefix}:rate:${source}`; holds the TAT in microseconds of server time.
 * ARGV[1]  emission interval in microseconds (about 1e6 / rps, see emissionIntervalMicros; an integer >= 1).
 * Returns  0 when the request is granted (the TAT moved forward by one interval);
 *          otherwise the milliseconds to wait before asking again (>= 1); nothing is changed.
 * One key per script call, so it runs on a Redis Cluster as is (the key's slot picks the master; with the
 * hash-tagged cluster prefix it is the slot of every other paysync key).
 * Server time (TIME) makes the clocks of the worker machines irrelevant. The key expires one second
 * after its TAT, when it no longer restricts anything, so idle sources leave nothing behind.
 */
const GCRA_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat > now then
  return math.ceil((tat - now) / 1000)
end
local ttl = math.ceil(interval / 1000) + 1000
redis.call('SET', KEYS[1], string.format('%.0f', now + interval), 'PX', ttl)
return 0
`;

const SCRIPT_NAME = 'paysyncRateGate';
type GateScript = (key: string, intervalMicros: string) => Promise<number>;

/** Registers the script on this connection (EVALSHA with an automatic EVAL fallback). */
function gateScript(redis: Redis): GateScript {
  redis.defineCommand(SCRIPT_NAME, { lua: GCRA_LUA, numberOfKeys: 1 });
  const fn = (redis as unknown as Record<string, GateScript>)[SCRIPT_NAME];
  if (!fn) throw new Error(`ioredis did not define ${SCRIPT_NAME}`);
  return fn.bind(redis);
}

/**
 * Grants are spaced so that ceil(rps) of them span a second plus this allowance: the grant happens in
 * Redis, the request arrives upstream a little later, and this much variation in that delay (a busy
 * event loop, a slow reply) still cannot put ceil(rps) + 1 requests into one second at the service.
 * It costs at most 1% of throughput.
 */
const JITTER_ALLOWANCE_MICROS = 10_000;

/** Minimum spacing between two grants, in microseconds. */
export function emissionIntervalMicros(rps: number): number {
  if (!Number.isFinite(rps) || rps <= 0)
    throw new ConfigError(`UPSTREAM_RPS must be a positive number, got ${rps}`);
  const average = 1_000_000 / rps;
  const perWindow = (1_000_000 + JITTER_ALLOWANCE_MICROS) / Math.ceil(rps);
  return Math.max(1, Math.ceil(Math.max(average, perWindow)));
}

export function createRateGate(redis: Redis, opts: RateGateOptions): RateGate {
  const interval = String(emissionIntervalMicros(opts.rps));
  const key = `${opts.prefix}:rate:${opts.source}`;
  const run = gateScript(redis);
  const { signal } = opts;

  const acquireFromRedis = async (): Promise<void> => {
    for (;;) {
      signal?.throwIfAborted();
      const waitMs = Number(await run(key, interval));
      if (waitMs <= 0) return;
      await sleep(waitMs, undefined, signal ? { signal } : {});
    }
  };

  // Callers in one process queue locally, so at most one of them polls Redis at a time: the same
  // ceiling, without a herd of waiters retrying the script every interval.
  let tail: Promise<void> = Promise.resolve();
  return {
    acquire(): Promise<void> {
      const turn = tail.then(acquireFromRedis);
      tail = turn.catch(() => undefined);
      return turn;
    },
  };
}
