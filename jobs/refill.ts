/**
 * Re-fills the Redis queue from PostgreSQL (principle 4: Redis is a cache of the work). Every item still
 * queued or running of every unfinished backfill gets its job back, and every schedule its scheduler: at
 * worker start, after a reconnect, as soon as a sentinel key shows that Redis lost its data (FLUSHALL, an
 * empty restart, eviction), and every `everyMs` in any case. Job ids are deterministic, so a re-fill of
 * what is already queued adds nothing; a lock makes one worker do it at a time.
 *
 * An item PostgreSQL holds open whose job Redis calls finished (failed after stalling too often, or lost
 * between a worker's crash and its verdict) is queued again: only a verdict written in PostgreSQL ends an
 * item.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type pg from 'pg';
import type { Settings } from '../src/config/settings.js';
import { describeError } from '../src/errors.js';
import type { Logger } from '../src/log.js';
import { openItems, settleBackfills } from '../src/warehouse/backfill-store.js';
import { ensureItemQueued } from './backfill-queue.js';
import type { SyncQueue } from './queue.js';
import { ensureSchedules } from './schedules.js';

export interface RefillReport {
  items: number;
  added: number;
  schedules: string[];
}

/** One re-fill pass (no lock): returns what it found open and what it had to add. */
export async function refillQueue(
  queue: SyncQueue,
  pool: pg.Pool,
  settings: Settings,
  options: { schedules: boolean },
): Promise<RefillReport> {
  const schedules = options.schedules ? await ensureSchedules(queue, settings) : [];
  await settleBackfills(pool);
  const items = await openItems(pool);
  let added = 0;
  for (const item of items) if (await ensureItemQueued(queue, item)) added += 1;
  return { items: items.length, added, schedules };
}

export interface RefillerOptions {
  queue: SyncQueue;
  redis: Redis;
  pool: pg.Pool;
  settings: Settings;
  log: Logger;
  schedules: boolean;
  /** Full pass at least this often (default 60 s). */
  everyMs?: number;
  /** How often the sentinel is checked (default 2 s; one EXISTS). */
  sentinelEveryMs?: number;
}

export interface Refiller {
  /** Runs a pass now under the lock (false when another worker holds it). */
  runNow(reason: string): Promise<boolean>;
  stop(): Promise<void>;
}

const LOCK_MS = 30_000;
// Releases the lock only when it is still this worker's (KEYS[1] lock; ARGV[1] token; returns 1 or 0).
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

export function startRefiller(options: RefillerOptions): Refiller {
  const { queue, redis, pool, settings, log } = options;
  const prefix = `${settings.PAYSYNC_QUEUE_PREFIX}:paysync`;
  const lockKey = `${prefix}:refill-lock`;
  const sentinelKey = `${prefix}:refill-sentinel`;
  let running: Promise<boolean> | null = null;
  let stopped = false;

  const pass = async (reason: string): Promise<boolean> => {
    const token = randomBytes(8).toString('hex');
    if ((await redis.set(lockKey, token, 'PX', LOCK_MS, 'NX')) !== 'OK') return false;
    try {
      const report = await refillQueue(queue, pool, settings, { schedules: options.schedules });
      await redis.set(sentinelKey, String(Date.now()));
      const level = report.added || report.schedules.length ? 'warn' : 'debug';
      log[level]({ reason, ...report }, 'queue re-filled from PostgreSQL');
      return true;
    } finally {
      await redis.eval(RELEASE, 1, lockKey, token).catch(() => undefined);
    }
  };
  const runNow = (reason: string): Promise<boolean> => {
    if (stopped) return Promise.resolve(false);
    // one pass at a time in this process; a pass asked for meanwhile is covered by the running one
    running ??= pass(reason)
      .catch((error) => {
        log.warn({ reason, error: describeError(error) }, 're-fill of the queue failed; retried shortly');
        return false;
      })
      .finally(() => (running = null));
    return running;
  };

  let lastPass = Date.now();
  const tick = async () => {
    const lost = (await redis.exists(sentinelKey)) === 0;
    if (lost || Date.now() - lastPass >= (options.everyMs ?? 60_000)) {
      if (await runNow(lost ? 'redis lost its data' : 'periodic')) lastPass = Date.now();
    }
  };
  let ticking = false; // while Redis is unreachable a check waits; the next ones are not piled on it
  const timer = setInterval(() => {
    if (ticking) return;
    ticking = true;
    void tick()
      .catch(() => undefined)
      .finally(() => (ticking = false));
  }, options.sentinelEveryMs ?? 2_000);
  let connectedOnce = redis.status === 'ready';
  const onReady = () => {
    if (connectedOnce) void runNow('redis reconnected');
    connectedOnce = true;
  };
  redis.on('ready', onReady);

  return {
    runNow,
    async stop() {
      stopped = true;
      clearInterval(timer);
      redis.off('ready', onReady);
      await running;
    },
  };
}
