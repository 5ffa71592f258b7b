/**
 * Sync progress per source and stream, kept in Redis (fast, shared by every worker; docs/architecture.md,
 * principle 4). Losing it loses no data: `isMissing` tells the tick to rebuild the checkpoint from the
 * warehouse's sync log (see checkpoint-rebuild.ts).
 *
 * Keys, all under the prefix so one Redis can hold several tenants or test runs:
 *   `${prefix}:cp:${source}:${stream}`             hash: checkpoint, lastTickAt, lastSuccessAt,
 *                                                  lastErrorAt, lastErrorMessage, lastErrorCode
 *   `${prefix}:cp:${source}:${stream}:open`        set of window keys being fetched now
 *   `${prefix}:cp:${source}:${stream}:incomplete`  hash: window key → JSON { detail, at }
 * Times are stored as milliseconds since the epoch, so Lua can compare them as numbers.
 * On a Redis Cluster the prefix is hash-tagged (`{paysync}`, config/redis-cluster.ts), so the three keys
 * of a stream share a slot: `get` reads them in one MULTI, which a cluster allows only within a slot.
 * The advance script touches one key only.
 */
import type { ChainableCommander, Redis } from 'ioredis';
import type { Stream } from '../upstream/schemas.js';

export interface CheckpointState {
  checkpoint: Date | null;
  lastTickAt: Date | null;
  lastSuccessAt: Date | null;
  lastError: { at: Date; message: string; code: string } | null;
  openWindows: string[];
  incompleteWindows: Array<{ window: string; detail: string; at: Date }>;
}

/** `start/end` in ISO form: the name of a window in these sets, in job data and in logs. */
export function windowKey(start: Date, end: Date): string {
  return `${start.toISOString()}/${end.toISOString()}`;
}

/** The bounds of a key made by `windowKey`; null for anything else (such as the transfers `scan` key). */
export function parseWindowKey(key: string): { start: Date; end: Date } | null {
  const parts = key.split('/');
  if (parts.length !== 2) return null;
  const [start, end] = parts.map((p) => new Date(p)) as [Date, Date];
  if (Number.isNaN(start.getTime()) || Number.isNaN(end.getTime())) return null;
  // Only the canonical form: a key that does not round-trip was not made by windowKey.
  return windowKey(start, end) === key ? { start, end } : null;
}

/**
 * KEYS[1]  the checkpoint hash.
 * ARGV[1]  the proposed checkpoint, milliseconds since the epoch.
 * Returns  the checkpoint stored afterwards (milliseconds, as a string): the proposed one when it is
 *          later than the stored one (or none is stored), else the stored one, untouched.
 * One script, so two workers racing can never move the checkpoint backwards.
 */
const ADVANCE_LUA = `
local current = redis.call('HGET', KEYS[1], 'checkpoint')
if current and current ~= '' and tonumber(current) >= tonumber(ARGV[1]) then
  return current
end
redis.call('HSET', KEYS[1], 'checkpoint', ARGV[1])
return ARGV[1]
`;

const ADVANCE_SCRIPT = 'paysyncAdvanceCheckpoint';
/** Long enough for any real error message; keeps a runaway one from bloating the hash. */
const MAX_ERROR_MESSAGE = 2000;

type AdvanceScript = (key: string, toMs: string) => Promise<string>;

function advanceScript(redis: Redis): AdvanceScript {
  redis.defineCommand(ADVANCE_SCRIPT, { lua: ADVANCE_LUA, numberOfKeys: 1 });
  const fn = (redis as unknown as Record<string, AdvanceScript>)[ADVANCE_SCRIPT];
  if (!fn) throw new Error(`ioredis did not define ${ADVANCE_SCRIPT}`);
  return fn.bind(redis);
}

function epochMs(date: Date): string {
  const ms = date.getTime();
  if (Number.isNaN(ms)) throw new TypeError('checkpoint time is an invalid Date');
  return String(ms);
}

function dateFrom(ms: string | undefined): Date | null {
  if (!ms) return null;
  const date = new Date(Number(ms));
  return Number.isNaN(date.getTime()) ? null : date;
}

/** Runs a MULTI and returns its replies, throwing the first command error instead of hiding it. */
async function execAll(chain: ChainableCommander): Promise<unknown[]> {
  const replies = await chain.exec();
  // null only follows a failed WATCH, which this store never sets: treat it as the error it would be.
  if (!replies) throw new Error('Redis aborted a checkpoint transaction');
  return replies.map(([error, reply]) => {
    if (error) throw error;
    return reply;
  });
}

export class CheckpointStore {
  private readonly advanceTo: AdvanceScript;

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    /** The clock for `recordError` and `markIncomplete` times (injectable for tests). */
    private readonly now: () => Date = () => new Date(),
  ) {
    this.advanceTo = advanceScript(redis);
  }

  async get(source: string, stream: Stream): Promise<CheckpointState> {
    const k = this.keys(source, stream);
    const chain = this.redis.multi().hgetall(k.state).smembers(k.open).hgetall(k.incomplete);
    const [state, open, incomplete] = (await execAll(chain)) as [
      Record<string, string>,
      string[],
      Record<string, string>,
    ];
    return {
      checkpoint: dateFrom(state.checkpoint),
      lastTickAt: dateFrom(state.lastTickAt),
      lastSuccessAt: dateFrom(state.lastSuccessAt),
      lastError: lastErrorFrom(state),
      openWindows: [...open].sort(),
      incompleteWindows: incompleteFrom(incomplete),
    };
  }

  /** Moves the checkpoint forward only (atomic compare in Lua: never backwards, two workers racing keep the max). Returns the checkpoint now stored. */
  async advance(source: string, stream: Stream, to: Date): Promise<Date> {
    const stored = await this.advanceTo(this.keys(source, stream).state, epochMs(to));
    return new Date(Number(stored));
  }

  /**
   * Unconditional set, used only by rebuild. `null` stores an empty checkpoint: "rebuilt, nothing to
   * resume from", so `isMissing` turns false and the rebuild is not repeated every tick.
   */
  async reset(source: string, stream: Stream, to: Date | null): Promise<void> {
    await this.redis.hset(this.keys(source, stream).state, 'checkpoint', to ? epochMs(to) : '');
  }

  async markWindowOpen(source: string, stream: Stream, window: string): Promise<void> {
    await this.redis.sadd(this.keys(source, stream).open, window);
  }

  async markWindowClosed(source: string, stream: Stream, window: string): Promise<void> {
    await this.redis.srem(this.keys(source, stream).open, window);
  }

  /** Records (or updates) why a window could not be completed; it stays listed until cleared. */
  async markIncomplete(source: string, stream: Stream, window: string, detail: string): Promise<void> {
    const value = JSON.stringify({ detail, at: this.now().getTime() });
    await this.redis.hset(this.keys(source, stream).incomplete, window, value);
  }

  async clearIncomplete(source: string, stream: Stream, window: string): Promise<void> {
    await this.redis.hdel(this.keys(source, stream).incomplete, window);
  }

  /** Keeps the latest error only; the tick and success times are left as they were. */
  async recordError(source: string, stream: Stream, error: { message: string; code: string }): Promise<void> {
    await this.redis.hset(this.keys(source, stream).state, {
      lastErrorAt: String(this.now().getTime()),
      lastErrorMessage: error.message.slice(0, MAX_ERROR_MESSAGE),
      lastErrorCode: error.code,
    });
  }

  /** Sets lastTickAt and lastSuccessAt to `at` and clears lastError, in one transaction. */
  async recordSuccess(source: string, stream: Stream, at: Date): Promise<void> {
    const key = this.keys(source, stream).state;
    const ms = epochMs(at);
    const chain = this.redis
      .multi()
      .hset(key, { lastTickAt: ms, lastSuccessAt: ms })
      .hdel(key, 'lastErrorAt', 'lastErrorMessage', 'lastErrorCode');
    await execAll(chain);
  }

  /**
   * True when Redis holds no checkpoint for this source/stream: never set, or lost (a restart without
   * persistence, a FLUSHALL). Other bookkeeping (errors, open windows) does not count as a checkpoint.
   */
  async isMissing(source: string, stream: Stream): Promise<boolean> {
    return (await this.redis.hexists(this.keys(source, stream).state, 'checkpoint')) === 0;
  }

  private keys(source: string, stream: Stream) {
    const state = `${this.prefix}:cp:${source}:${stream}`;
    return { state, open: `${state}:open`, incomplete: `${state}:incomplete` };
  }
}

function lastErrorFrom(state: Record<string, string>): CheckpointState['lastError'] {
  const at = dateFrom(state.lastErrorAt);
  if (!at) return null;
  return { at, message: state.lastErrorMessage ?? '', code: state.lastErrorCode ?? 'ERROR' };
}

function incompleteFrom(hash: Record<string, string>): CheckpointState['incompleteWindows'] {
  return Object.entries(hash)
    .map(([window, json]) => ({ window, ...incompleteEntry(json) }))
    .sort((a, b) => (a.window < b.window ? -1 : a.window > b.window ? 1 : 0));
}

/** Tolerates a hand-edited or truncated entry: it still shows up, with what could be read. */
function incompleteEntry(json: string): { detail: string; at: Date } {
  try {
    const parsed = JSON.parse(json) as { detail?: unknown; at?: unknown };
    const at = dateFrom(String(parsed.at ?? '')) ?? new Date(0);
    return { detail: String(parsed.detail ?? ''), at };
  } catch {
    return { detail: json, at: new Date(0) };
  }
}
