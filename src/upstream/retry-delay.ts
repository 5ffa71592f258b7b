/**
 * The HTTP retry decision (cf. got's calculate-retry-delay.ts): `retryDelay` says how long an attempt waits
 * before the next one, or 'stop', following the one retry table per error code (src/error-codes.ts).
 * Pure: no clock or randomness of its own.
 *
 * - 400/401/403 never retry: the request or the key is wrong, and repeating it cannot heal (principle 5).
 * - 429, 5xx, 408, timeouts, resets and malformed bodies may heal: exponential backoff with full jitter.
 * - A request that is not idempotent (initialize) is repeated only after a 429 or a refused connection.
 * - `Retry-After` (seconds or an HTTP date) is honoured as a floor. A wait longer than `maxRetryAfterMs`
 *   is not slept through in-process: the client stops and the error carries `retryAfterMs`, so the job
 *   layer can reschedule instead of holding a worker (got does the same with `maxRetryAfter`).
 */
import { RETRY_BY_CODE, type ErrorCode } from '../error-codes.js';

/** How an attempt failed, as far as retrying is concerned. */
export type FailureKind =
  /** 400, 401, 403: retrying cannot fix it. */
  | 'fatal'
  /** 429. */
  | 'rate-limited'
  /** 5xx and 408. */
  | 'server'
  /** Timeout, reset, refused connection. */
  | 'network'
  /** A 2xx whose body is not what the interface allows. */
  | 'protocol'
  /** Another status (3xx, 404, 405…): a wrong base URL or path does not heal in seconds. */
  | 'unexpected';

export interface RetryPolicy {
  /** Retries after the first attempt (UPSTREAM_RETRIES). */
  retries: number;
  baseMs: number;
  maxMs: number;
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  retries: 5,
  baseMs: 250,
  maxMs: 30_000,
  maxRetryAfterMs: 120_000,
});

export interface RetryInput {
  /** The attempt that just failed, starting at 1. */
  attempt: number;
  kind: FailureKind;
  /** The wait the service asked for, already parsed (see parseRetryAfter). */
  retryAfterMs?: number | undefined;
  /**
   * False for a request that must not run twice (initialize creates a payment and the interface offers no
   * idempotency key). Such a request is repeated only when the service provably did not act on it.
   */
  idempotent?: boolean;
  /** The connection was refused: the request never reached the service. */
  neverSent?: boolean;
}

/** The error code an HTTP attempt's failure kind stands for (fatal: by its status). */
const CODE_OF_KIND: Record<Exclude<FailureKind, 'fatal'>, ErrorCode> = {
  'rate-limited': 'UPSTREAM_RATE_LIMITED',
  server: 'UPSTREAM_SERVER_ERROR',
  network: 'UPSTREAM_NETWORK',
  protocol: 'UPSTREAM_PROTOCOL',
  unexpected: 'UPSTREAM_UNEXPECTED_STATUS',
};

function kindRetries(kind: FailureKind): boolean {
  return kind === 'fatal' ? false : RETRY_BY_CODE[CODE_OF_KIND[kind]].retry;
}

/**
 * How long a job waits before its next attempt: exponential from `baseMs` (attempt 1 waits baseMs),
 * capped at `maxMs`, and never less than the Retry-After the service named (the client hands a long
 * one over to the job layer instead of sleeping through it).
 */
export function jobRetryDelay(
  attemptsMade: number,
  retryAfterMs: number | undefined,
  baseMs: number,
  maxMs = 10 * 60_000,
): number {
  const backoff = Math.min(maxMs, baseMs * 2 ** Math.max(0, attemptsMade - 1));
  return Math.max(backoff, retryAfterMs ?? 0);
}

/** Maps an HTTP status that is not a success to its failure kind. */
export function failureKindOf(status: number): FailureKind {
  if (status === 400 || status === 401 || status === 403) return 'fatal';
  if (status === 429) return 'rate-limited';
  if (status >= 500 || status === 408) return 'server';
  return 'unexpected';
}

/** Milliseconds to wait before the next attempt, or 'stop'. `random` returns [0, 1). */
export function retryDelay(
  input: RetryInput,
  policy: RetryPolicy,
  random: () => number = Math.random,
): number | 'stop' {
  if (!kindRetries(input.kind) || input.attempt > policy.retries) return 'stop';
  // A 5xx, timeout or reset after sending leaves a POST's effect unknown: repeating it could pay twice.
  if (input.idempotent === false && input.kind !== 'rate-limited' && !input.neverSent) return 'stop';
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** (input.attempt - 1));
  const jittered = Math.round(random() * ceiling);
  if (input.retryAfterMs === undefined) return jittered;
  if (input.retryAfterMs > policy.maxRetryAfterMs) return 'stop';
  // The service's wait is a floor; a little jitter on top keeps workers from returning in lockstep.
  return input.retryAfterMs + Math.round(random() * policy.baseMs);
}

/** Parses `Retry-After` (delta-seconds or an HTTP date) into milliseconds from `nowMs`; undefined if absent/bad. */
export function parseRetryAfter(header: string | undefined, nowMs: number): number | undefined {
  if (header === undefined) return undefined;
  const text = header.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  // An HTTP date names its day and month; a bare number Date.parse would read as a year.
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}
