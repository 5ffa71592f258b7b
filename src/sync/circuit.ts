/**
 * The circuit breaker of one source: a down service is left alone (principle 8). Its state lives in Redis,
 * so every worker process of the source shares it.
 *
 * - Closed: requests go out. Every attempt is watched (the client's AttemptWatch): a 5xx, a 408, a timeout
 *   or a lost connection counts one failure; any answer (2xx, 4xx, 429) resets the count. After
 *   OPEN_AFTER_FAILURES failures in a row, across all workers, the circuit opens.
 * - Open: no request is sent (`before` throws CircuitOpenError, so a retry loop stops at its next attempt).
 *   Each stream's tick may send one probe request, when it is due: the first tick after the opening, then
 *   after a gap that doubles from SYNC_EVERY up to SYNC_EVERY × 4 (probes on ticks 1, 2, 4, 8, 12, … after
 *   the tick that opened it).
 *   Backfill jobs are put back to wait (jobs/sync-processor.ts), not failed: their attempts are not spent.
 * - The first answer closes it (a probe's, or a request that was already in flight), and the tick that
 *   probed goes on to sync at once, so the backlog is read within that tick and the next.
 *
 * Times are the sync clock's (`now`, the wall clock outside tests), in epoch milliseconds.
 */
import type { Redis } from 'ioredis';
import { CircuitOpenError, type UpstreamError } from '../errors.js';
import { silentLogger, type Logger } from '../log.js';
import type { AttemptWatch, UpstreamClient } from '../upstream/client.js';
import type { Stream } from '../upstream/schemas.js';
import { isOutage, reasonOfError, type ReasonCode } from './window-reasons.js';

/** Failed attempts in a row (across workers) that open the circuit: two requests' retries, by default. */
export const OPEN_AFTER_FAILURES = 12;
/** The longest gap between two probes of a stream, in ticks (SYNC_EVERY). */
export const MAX_PROBE_GAP_TICKS = 4;

/** How an outage showed itself: the window reason code (window-reasons.ts) of a 5xx, or of no answer. */
export type OutageCode = Extract<ReasonCode, 'SERVICE_UNAVAILABLE' | 'CONNECTION_FAILED'>;

/**
 * Whether an attempt's outcome counts towards opening the circuit: a 5xx, a 408 or no answer. Any answer
 * resets the count, a 429 included: a service that rate-limits is up, and its Retry-After is obeyed.
 */
export function isOutageStatus(status: number | 'network'): boolean {
  return status === 'network' || status >= 500 || status === 408;
}

/** Whether a failed request's error is an outage by the window reasons' table (not the window's fault). */
export function isOutageError(error: unknown): boolean {
  return isOutage(reasonOfError(error));
}

export function outageCodeOf(status: number | 'network'): OutageCode {
  return status === 'network' ? 'CONNECTION_FAILED' : 'SERVICE_UNAVAILABLE';
}

/** The gap after a probe, given the previous gap (0: the first probe since the circuit opened). */
export function nextProbeGap(previousMs: number, everyMs: number): number {
  return previousMs <= 0 ? everyMs : Math.min(previousMs * 2, everyMs * MAX_PROBE_GAP_TICKS);
}

/** The circuit's hash: `${prefix}:circuit:${source}`. */
export function circuitKey(prefix: string, source: string): string {
  return `${prefix}:circuit:${source}`;
}

/**
 * KEYS[1]  the circuit's hash.
 * ARGV[1]  'answered' or 'outage'; ARGV[2] now (ms); ARGV[3] failures that open the circuit;
 *          ARGV[4] the failure's message; ARGV[5] its OutageCode.
 * Returns  1 when this call opened the circuit, 2 when it closed it, 0 otherwise.
 * An answer deletes the hash: closed, count reset, probe schedule forgotten.
 */
const OBSERVE_LUA = `
if ARGV[1] == 'answered' then
  if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
  local was = redis.call('HGET', KEYS[1], 'state')
  redis.call('DEL', KEYS[1])
  if was == 'open' then return 2 end
  return 0
end
local n = redis.call('HINCRBY', KEYS[1], 'failures', 1)
redis.call('HSET', KEYS[1], 'lastError', ARGV[4], 'lastCode', ARGV[5], 'lastAt', ARGV[2])
if redis.call('HGET', KEYS[1], 'state') ~= 'open' and n >= tonumber(ARGV[3]) then
  redis.call('HSET', KEYS[1], 'state', 'open', 'since', ARGV[2])
  return 1
end
return 0
`;

/**
 * KEYS[1]  the circuit's hash.
 * ARGV[1]  the stream; ARGV[2] now (ms); ARGV[3] SYNC_EVERY (ms); ARGV[4] the most ticks between probes.
 * A stream's first probe is due one SYNC_EVERY after the opening: the tick that opened the circuit (and
 * any other worker's or stream's turn within it) sends nothing more, however many windows it held.
 * Returns  {0, 0} closed: run as usual; {1, next} open, this stream's next probe is not due: wait;
 *          {2, next} open and due: this caller sends the probe, the one after it is scheduled at `next`.
 * A probe is due half a tick early, so a tick that fires a little before its nominal time still probes.
 * The claim schedules the next probe as if this one fails (an answer deletes the schedule), so two
 * workers ticking the same stream at once send one probe between them.
 */
const CLAIM_LUA = `
if redis.call('HGET', KEYS[1], 'state') ~= 'open' then return {0, 0} end
local now = tonumber(ARGV[2])
local every = tonumber(ARGV[3])
local since = tonumber(redis.call('HGET', KEYS[1], 'since') or '0')
local nextAt = tonumber(redis.call('HGET', KEYS[1], 'next:' .. ARGV[1]) or tostring(since + every))
if now + every / 2 < nextAt then return {1, nextAt} end
local gap = tonumber(redis.call('HGET', KEYS[1], 'gap:' .. ARGV[1]) or '0')
if gap <= 0 then gap = every else gap = math.min(gap * 2, every * tonumber(ARGV[4])) end
redis.call('HSET', KEYS[1], 'gap:' .. ARGV[1], string.format('%.0f', gap),
  'next:' .. ARGV[1], string.format('%.0f', now + gap))
redis.call('HINCRBY', KEYS[1], 'probes', 1)
return {2, now + gap}
`;

/** What `status`, metrics and the jobs see of a source's circuit. */
export interface CircuitState {
  source: string;
  open: boolean;
  /** Failed attempts in a row (reset by any answer). */
  failures: number;
  /** When it opened. */
  since: Date | null;
  /** The last failure: its message (names the source and endpoint, never the key) and code. */
  lastError: string | null;
  lastCode: OutageCode | null;
  lastAt: Date | null;
  /** The earliest next probe of a stream (null: closed, or due at the next tick). */
  nextProbe: Date | null;
  /** Probes sent since it opened. */
  probes: number;
}

const dateOf = (ms: string | undefined): Date | null =>
  ms === undefined || ms === '' ? null : new Date(Number(ms));

function stateOf(source: string, hash: Record<string, string>): CircuitState {
  const nexts = Object.entries(hash)
    .filter(([field]) => field.startsWith('next:'))
    .map(([, ms]) => Number(ms));
  return {
    source,
    open: hash.state === 'open',
    failures: Number(hash.failures ?? 0),
    since: dateOf(hash.since),
    lastError: hash.lastError ?? null,
    lastCode: (hash.lastCode as OutageCode | undefined) ?? null,
    lastAt: dateOf(hash.lastAt),
    nextProbe: hash.state === 'open' && nexts.length > 0 ? new Date(Math.min(...nexts)) : null,
    probes: Number(hash.probes ?? 0),
  };
}

/** The circuit of one source, as stored (for `status`, the status page and metrics). */
export async function readCircuit(redis: Redis, prefix: string, source: string): Promise<CircuitState> {
  return stateOf(source, await redis.hgetall(circuitKey(prefix, source)));
}

/** The upstream problem in a few words: "503 Service Unavailable", "connection refused", … */
export function outageProblem(state: Pick<CircuitState, 'lastCode' | 'lastError'>): string {
  const text = state.lastError ?? '';
  if (state.lastCode === 'SERVICE_UNAVAILABLE') {
    const status = /\b(5\d\d|408)\b/.exec(text)?.[1];
    if (status === '503') return 'it answers 503 Service Unavailable';
    return status ? `it answers ${status}` : 'it answers with server errors';
  }
  if (/ECONNREFUSED/.test(text)) return 'connection refused';
  if (/ECONNRESET|socket hang up/i.test(text)) return 'connection reset';
  if (/timeout|ETIMEDOUT/i.test(text)) return 'no answer in time (timeout)';
  return 'it cannot be reached';
}

/** One line for people: what is wrong upstream, since when, and when paysync tries again. */
export function describeOpenCircuit(state: CircuitState): string {
  const since = state.since ? ` since ${state.since.toISOString()}` : '';
  const next = state.nextProbe ? `next probe at ${state.nextProbe.toISOString()}` : 'probed at the next tick';
  return (
    `${outageProblem(state)}; circuit open${since} after ${state.failures} failed attempts in a row, ` +
    `${next} (one request per stream); last error: ${state.lastError ?? 'unknown'}`
  );
}

export type ProbeTurn =
  { kind: 'closed' } | { kind: 'wait'; nextProbe: Date } | { kind: 'probe'; nextProbe: Date };

export interface CircuitOptions {
  prefix: string;
  source: string;
  /** SYNC_EVERY: the first gap between probes, and a quarter of the longest. */
  syncEveryMs: number;
  now: () => Date;
  /**
   * The client a probe is sent with: one attempt (no retries), watched by `watch` only (not held back by
   * the open circuit itself), behind the same rate ceiling.
   */
  probeClient: (watch: AttemptWatch) => UpstreamClient;
  log?: Logger;
}

type Script = (key: string, ...args: string[]) => Promise<unknown>;

function script(redis: Redis, name: string, lua: string): Script {
  redis.defineCommand(name, { lua, numberOfKeys: 1 });
  const fn = (redis as unknown as Record<string, Script>)[name];
  if (!fn) throw new Error(`ioredis did not define ${name}`);
  return fn.bind(redis);
}

/** A source's circuit: the client's AttemptWatch, and the tick's probe. */
export class Circuit implements AttemptWatch {
  private readonly key: string;
  private readonly observe: Script;
  private readonly claim: Script;
  private readonly log: Logger;
  private readonly probes: UpstreamClient;

  constructor(
    private readonly redis: Redis,
    private readonly options: CircuitOptions,
  ) {
    this.key = circuitKey(options.prefix, options.source);
    this.observe = script(redis, 'paysyncCircuitObserve', OBSERVE_LUA);
    this.claim = script(redis, 'paysyncCircuitClaim', CLAIM_LUA);
    this.log = options.log ?? silentLogger;
    this.probes = options.probeClient({
      before: async () => undefined,
      after: (attempt) => this.after(attempt),
    });
  }

  get source(): string {
    return this.options.source;
  }

  read(): Promise<CircuitState> {
    return readCircuit(this.redis, this.options.prefix, this.options.source);
  }

  /** Keeps a request from being sent while the circuit is open. */
  async before(endpoint: string): Promise<void> {
    if ((await this.redis.hget(this.key, 'state')) !== 'open') return;
    const state = await this.read();
    if (!state.open) return; // closed in between
    throw new CircuitOpenError({ source: this.source, endpoint }, describeOpenCircuit(state));
  }

  async after(attempt: { endpoint: string; status: number | 'network'; error?: UpstreamError }) {
    const outage = isOutageStatus(attempt.status);
    const message = attempt.error?.message ?? `${attempt.status}`;
    const changed = await this.observe(
      this.key,
      outage ? 'outage' : 'answered',
      String(this.options.now().getTime()),
      String(OPEN_AFTER_FAILURES),
      outage ? message : '',
      outage ? outageCodeOf(attempt.status) : '',
    );
    const where = { source: this.source, endpoint: attempt.endpoint };
    if (Number(changed) === 1)
      this.log.warn(
        { ...where, error: message },
        `the service is down: circuit open after ${OPEN_AFTER_FAILURES} failed attempts in a row; ` +
          'no requests but one probe per stream per tick until it answers',
      );
    if (Number(changed) === 2) this.log.info(where, 'the service answers again: circuit closed');
  }

  /** Whether this tick of `stream` runs as usual, waits, or sends the stream's probe. */
  async turn(stream: Stream): Promise<ProbeTurn> {
    const [kind, next] = (await this.claim(
      this.key,
      stream,
      String(this.options.now().getTime()),
      String(this.options.syncEveryMs),
      String(MAX_PROBE_GAP_TICKS),
    )) as [number, number];
    if (kind === 0) return { kind: 'closed' };
    return { kind: kind === 1 ? 'wait' : 'probe', nextProbe: new Date(Number(next)) };
  }

  /**
   * Sends the stream's probe: one request, the smallest the list allows (page 0, size 1; payments of the
   * last hour). True when the service answered, whatever it said: the circuit is then closed.
   */
  async probe(stream: Stream): Promise<boolean> {
    const nowMs = this.options.now().getTime();
    try {
      if (stream === 'payments') {
        const dateTo = Math.floor(nowMs / 1000);
        await this.probes.listPayments({ page: 0, size: 1, dateFrom: dateTo - 3600, dateTo });
      } else await this.probes.listTransfers({ page: 0, size: 1 });
    } catch {
      // the watch recorded how it failed; an answer (even 401) closed the circuit
    }
    return !(await this.read()).open;
  }
}
