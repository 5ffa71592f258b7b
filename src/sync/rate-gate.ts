/**
 * The per-source request ceiling (`UPSTREAM_RPS`), shared by every worker process on one Redis
 * (docs/architecture.md, principle 6: scale out, and the ceiling still holds).
 *
 * GCRA that keeps its own timeline: the bucket holds the next slot (the theoretical arrival time, TAT);
 * a request is granted only when the server clock has reached it, and the slot after it is this slot plus
 * one interval (1/rps), not "now" plus one interval. A waiter that wakes a few milliseconds late therefore
 * costs no throughput: the schedule does not drift by every timer's lateness and Redis round trip, which
 * at 20 rps and above would lose several percent of the budget. The timeline may lag the clock by at
 * most CATCH_UP_MICROS: a gate idle for longer restarts from "now minus that", so an idle gate never
 * banks a burst.
 *
 * What a window of the service's clock can hold: grants land on slots at least one interval apart, and a
 * grant happens at most CATCH_UP_MICROS after its slot, so any span of W seconds holds at most
 * floor((W + 0.01) × rps) + 1 grants — within the ceiling's contract, `UPSTREAM_RPS` × 1.05 + 1 in any
 * sliding second (any 5 seconds below 5 req/s), with the rest of the 5% left for the delay between the
 * grant in Redis and the request's arrival at the service.
 *
 * Why check-and-retry rather than "reserve a slot and sleep until it": a reservation lets the request go
 * out at a time measured on the caller's clock, where network and timer jitter can squeeze two requests
 * closer than 1/rps. Granting at the moment of the request keeps the spacing true at the server.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { ConfigError } from '../errors.js';
import { paceKeyOf } from './request-pace.js';

/** One grant: when Redis granted it, and the slot of the timeline it used (microseconds, server time). */
export interface Grant {
  atMicros: number;
  slotMicros: number;
}

export interface RateGate {
  /**
   * Resolves when the caller may send one request; rejects when the gate's signal aborts. `latencyMs`:
   * the caller's smoothed answer time, kept with the source's pace for progress and the status page.
   */
  acquire(latencyMs?: number): Promise<Grant>;
  /**
   * The service asked for a pause (`Retry-After`): no slot is granted to any process before `ms` from now
   * (at most MAX_HOLD_MS), and the timeline resumes from there.
   */
  hold(ms: number): Promise<void>;
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
 * How far the timeline may lag the server clock and still be followed (a late waiter catches up on it).
 * 10 ms: a timer on a busy machine wakes a few ms late; the allowance is what a grant may add to a
 * sliding second beyond the rate (1% of it), leaving the rest of the contract's 5% and its one request for arrival jitter.
 */
export const CATCH_UP_MICROS = 10_000;

/**
 * KEYS[1]  the bucket, `${prefix}:rate:${source}`; holds the next slot (TAT) in microseconds of server time.
 * KEYS[2]  the source's pace, `${prefix}:rate:${source}:pace` (request-pace.ts reads it): a hash of the
 *          grants per second of server time (`s:<unix second>`, the last 30 seconds kept) and the latency
 *          the workers measured (`latency` in ms, smoothed over their reports; `latencyAt`, its second).
 * ARGV[1]  emission interval in microseconds (ceil(1e6 / rps), an integer >= 1).
 * ARGV[2]  catch-up allowance in microseconds (CATCH_UP_MICROS).
 * ARGV[3]  the caller's smoothed answer time in ms, or '' when it has none yet.
 * Returns  { 0, now, slot } when the request is granted: the slot it used is max(TAT, now − catch-up) and
 *          the next slot becomes slot + interval; otherwise { wait, now, TAT } with the milliseconds to wait
 *          before asking again (>= 1), the bucket unchanged.
 * Both keys start with the prefix, so on a Redis Cluster (hash-tagged prefix) they share every other
 * paysync key's slot. Server time (TIME) makes the clocks of the worker machines irrelevant. The bucket
 * expires one second after its TAT and the pace a minute after the last grant, so idle sources leave
 * nothing behind.
 */
const GCRA_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat > now then
  return { math.ceil((tat - now) / 1000), now, tat }
end
local slot = math.max(tat, now - tonumber(ARGV[2]))
local nextSlot = slot + interval
local ttl = math.ceil((nextSlot - now) / 1000) + 1000
redis.call('SET', KEYS[1], string.format('%.0f', nextSlot), 'PX', ttl)
local second = tonumber(t[1])
redis.call('HINCRBY', KEYS[2], 's:' .. second, 1)
redis.call('HDEL', KEYS[2], 's:' .. (second - 30))
if ARGV[3] ~= '' then
  local seen = tonumber(redis.call('HGET', KEYS[2], 'latency') or ARGV[3])
  redis.call('HSET', KEYS[2], 'latency', string.format('%.1f', 0.8 * seen + 0.2 * tonumber(ARGV[3])), 'latencyAt', second)
end
redis.call('PEXPIRE', KEYS[2], 60000)
return { 0, now, slot }
`;

/**
 * KEYS[1]  the bucket (as above).
 * ARGV[1]  the pause in microseconds.
 * Moves the next slot to now + pause unless it is later already; returns the next slot.
 */
const HOLD_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
local held = math.max(tat, now + tonumber(ARGV[1]))
redis.call('SET', KEYS[1], string.format('%.0f', held), 'PX', math.ceil((held - now) / 1000) + 1000)
return held
`;

/** The longest pause a `Retry-After` imposes on the gate (the client gives up on longer ones anyway). */
export const MAX_HOLD_MS = 120_000;

const SCRIPT_NAME = 'paysyncRateGateTimeline';
const HOLD_NAME = 'paysyncRateGateHold';
type GateScript = (
  key: string,
  paceKey: string,
  intervalMicros: string,
  catchUpMicros: string,
  latencyMs: string,
) => Promise<number[]>;
type HoldScript = (key: string, pauseMicros: string) => Promise<number>;

/** Registers a script on this connection (EVALSHA with an automatic EVAL fallback). */
function script<F>(redis: Redis, name: string, lua: string, numberOfKeys = 1): F {
  redis.defineCommand(name, { lua, numberOfKeys });
  const fn = (redis as unknown as Record<string, F>)[name] as unknown as { bind(to: unknown): F } | undefined;
  if (!fn) throw new Error(`ioredis did not define ${name}`);
  return fn.bind(redis);
}

/** Spacing between two slots of the timeline, in microseconds: 1/rps, rounded up. */
export function emissionIntervalMicros(rps: number): number {
  if (!Number.isFinite(rps) || rps <= 0)
    throw new ConfigError(`UPSTREAM_RPS must be a positive number, got ${rps}`);
  return Math.max(1, Math.ceil(1_000_000 / rps));
}

/**
 * The most requests the ceiling's contract allows in the window that judges it: any sliding second at
 * 5 req/s and above, any 5 seconds below (where one request more or less is a large share of a second).
 */
export function ceilingContract(rps: number): { windowMs: number; most: number } {
  const windowMs = rps >= 5 ? 1_000 : 5_000;
  return { windowMs, most: Math.floor((rps * windowMs * 1.05) / 1000 + 1) };
}

export function createRateGate(redis: Redis, opts: RateGateOptions): RateGate {
  const interval = String(emissionIntervalMicros(opts.rps));
  const catchUp = String(CATCH_UP_MICROS);
  const key = `${opts.prefix}:rate:${opts.source}`;
  const paceKey = paceKeyOf(opts.prefix, opts.source);
  const run = script<GateScript>(redis, SCRIPT_NAME, GCRA_LUA, 2);
  const holdScript = script<HoldScript>(redis, HOLD_NAME, HOLD_LUA);
  const { signal } = opts;

  const acquireFromRedis = async (latencyMs: number | undefined): Promise<Grant> => {
    const latency = latencyMs !== undefined && Number.isFinite(latencyMs) ? latencyMs.toFixed(1) : '';
    for (;;) {
      signal?.throwIfAborted();
      const answer = await run(key, paceKey, interval, catchUp, latency);
      const [waitMs, now, slot] = answer.map(Number) as [number, number, number];
      if (waitMs <= 0) return { atMicros: now, slotMicros: slot };
      await sleep(waitMs, undefined, signal ? { signal } : {});
    }
  };

  // Callers in one process queue locally, so at most one of them polls Redis at a time: the same
  // ceiling, without a herd of waiters retrying the script every interval.
  let tail: Promise<unknown> = Promise.resolve();
  return {
    acquire(latencyMs?: number): Promise<Grant> {
      const turn = tail.then(() => acquireFromRedis(latencyMs));
      tail = turn.catch(() => undefined);
      return turn;
    },
    async hold(ms: number): Promise<void> {
      const pause = Math.min(MAX_HOLD_MS, Math.max(0, ms));
      await holdScript(key, String(Math.round(pause * 1000)));
    },
  };
}
