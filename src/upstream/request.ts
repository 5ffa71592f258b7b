/**
 * The attempt loop around got. got's own retry is off (`retry: { limit: 0 }`) so that the shared rate
 * ceiling (`beforeRequest`) runs before every attempt, and so that the decision to retry is ours, as data
 * (retry-delay.ts). The API key is revealed here only, into the `X-API-Key` header (and to scrub it from
 * any text the service sends back); the URL carries documented query parameters only.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import got from 'got';
import type { Source } from '../config/settings.js';
import type { UpstreamError } from '../errors.js';
import { silentLogger, type Logger } from '../log.js';
import { UpstreamProtocolError } from '../errors.js';
import { DEFAULT_MAX_BODY_BYTES, readBounded, tooLargeDetail } from './bounded-body.js';
import { errorForStatus, errorForTransport, transportCode, type AttemptContext } from './http-errors.js';
import {
  failureKindOf,
  parseRetryAfter,
  retryDelay,
  type FailureKind,
  type RetryPolicy,
} from './retry-delay.js';

/** A 2xx response as the parser sees it. */
export interface RawResponse {
  status: number;
  body: string;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: UpstreamError };

export interface RequestSpec<T> {
  method: 'GET' | 'POST';
  endpoint: string;
  searchParams?: Record<string, string | number>;
  json?: unknown;
  idempotent: boolean;
  /** Reads a 2xx body; a failure is a protocol error (retried if the request is idempotent). */
  parse: (response: RawResponse) => Parsed<T>;
}

/** What one attempt at the service showed, for whoever paces the requests (src/sync/in-flight.ts). */
export interface AttemptReport {
  /** The HTTP status, or 'network' when no answer came. */
  status: number | 'network';
  /** Milliseconds from sending to the whole answer received (before it is parsed). */
  ms: number;
  /** The wait the service asked for (`Retry-After`), in ms. */
  retryAfterMs?: number | undefined;
}

/**
 * Called before every attempt; resolves when the attempt may go out (the shared rate ceiling, the
 * in-flight limit). When it resolves with a function, that function is called once with the attempt's
 * report when its answer (or failure) is in, or with null if the attempt ended without one.
 */
export type BeforeRequest = () => Promise<unknown>;

/**
 * Watches every attempt of one source's requests: the circuit breaker (src/sync/circuit.ts) implements it.
 * `before` runs ahead of the rate ceiling, and again once the attempt's slot came, and may throw to keep
 * the attempt from being sent (a retry loop
 * then ends with that error); `after` learns how the attempt went: the HTTP status, or 'network' when no
 * answer came, and the error when it failed.
 */
export interface AttemptWatch {
  before(endpoint: string): Promise<void>;
  after(attempt: { endpoint: string; status: number | 'network'; error?: UpstreamError }): Promise<void>;
}

export interface SenderOptions {
  source: Source;
  timeoutMs: number;
  /** Largest response body read, counted after decompression (UPSTREAM_MAX_BODY). */
  maxBodyBytes?: number | undefined;
  policy: RetryPolicy;
  beforeRequest?: BeforeRequest | undefined;
  watch?: AttemptWatch | undefined;
  onResponse?:
    | ((info: { endpoint: string; status: number | 'network'; attempt: number; ms: number }) => void)
    | undefined;
  log?: Logger | undefined;
}

type Outcome<T> = { answeredMs: number } & (
  | { ok: true; value: T; status: number }
  | { ok: false; error: UpstreamError; kind: FailureKind; status: number | 'network'; neverSent: boolean }
);

export type Send = <T>(spec: RequestSpec<T>) => Promise<T>;

function retryAfterOf<T>(outcome: Outcome<T>): number | undefined {
  return outcome.ok ? undefined : (outcome.error as { retryAfterMs?: number }).retryAfterMs;
}

function reportOf<T>(outcome: Outcome<T>): AttemptReport {
  return { status: outcome.status, ms: outcome.answeredMs, retryAfterMs: retryAfterOf(outcome) };
}

export function createSender(options: SenderOptions): Send {
  const log = options.log ?? silentLogger;
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const http = got.extend({
    prefixUrl: options.source.baseUrl,
    retry: { limit: 0 },
    throwHttpErrors: false,
    // A redirect would forward the X-API-Key header to wherever it points; success codes are 2xx only.
    followRedirect: false,
    responseType: 'text',
    timeout: { request: options.timeoutMs },
  });
  const ctxOf = (endpoint: string): AttemptContext => ({ endpoint, source: options.source.name });

  async function attemptOnce<T>(spec: RequestSpec<T>): Promise<Outcome<T>> {
    const key = options.source.apiKey.reveal();
    const ctx = ctxOf(spec.endpoint);
    const sent = performance.now();
    let answeredMs = NaN;
    try {
      const response = await readBounded(
        http.stream(spec.endpoint.replace(/^\//, ''), {
          method: spec.method,
          headers: { 'x-api-key': key, accept: 'application/json' },
          searchParams: spec.searchParams,
          json: spec.json,
        }),
        maxBodyBytes,
      );
      answeredMs = performance.now() - sent;
      if (response.tooLarge) {
        const error = new UpstreamProtocolError(ctx, tooLargeDetail(maxBodyBytes));
        return {
          ok: false,
          error,
          kind: 'protocol',
          status: response.statusCode,
          neverSent: false,
          answeredMs,
        };
      }
      const status = response.statusCode;
      if (status >= 200 && status < 300) {
        const parsed = spec.parse({ status, body: response.body });
        if (parsed.ok) return { ok: true, value: parsed.value, status, answeredMs };
        return { ok: false, error: parsed.error, kind: 'protocol', status, neverSent: false, answeredMs };
      }
      const retryAfterMs = parseRetryAfter(response.headers['retry-after'], Date.now());
      const error = errorForStatus(ctx, status, response.body, key, retryAfterMs);
      return { ok: false, error, kind: failureKindOf(status), status, neverSent: false, answeredMs };
    } catch (thrown) {
      const error = errorForTransport(ctx, thrown, options.timeoutMs, key);
      const neverSent = transportCode(thrown) === 'ECONNREFUSED';
      answeredMs = performance.now() - sent;
      return { ok: false, error, kind: 'network', status: 'network', neverSent, answeredMs };
    }
  }

  return async function send<T>(spec: RequestSpec<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      await options.watch?.before(spec.endpoint);
      const done = await options.beforeRequest?.();
      const report = typeof done === 'function' ? (done as (r: AttemptReport | null) => void) : undefined;
      // asked again once the attempt's slot came: the circuit may have opened while it waited for it
      try {
        await options.watch?.before(spec.endpoint);
      } catch (error) {
        report?.(null);
        throw error;
      }
      const started = performance.now();
      let outcome: Outcome<T> | undefined;
      try {
        outcome = await attemptOnce(spec);
      } finally {
        report?.(outcome ? reportOf(outcome) : null);
      }
      const ms = Math.round(performance.now() - started);
      options.onResponse?.({ endpoint: spec.endpoint, status: outcome.status, attempt, ms });
      await options.watch?.after({
        endpoint: spec.endpoint,
        status: outcome.status,
        ...(outcome.ok ? {} : { error: outcome.error }),
      });
      if (outcome.ok) return outcome.value;
      const retryAfterMs = retryAfterOf(outcome);
      const delay = retryDelay(
        {
          attempt,
          kind: outcome.kind,
          retryAfterMs,
          idempotent: spec.idempotent,
          neverSent: outcome.neverSent,
        },
        options.policy,
      );
      if (delay === 'stop') throw outcome.error;
      log.warn(
        {
          source: options.source.name,
          endpoint: spec.endpoint,
          attempt,
          delayMs: delay,
          code: outcome.error.code,
        },
        `upstream attempt failed, retrying: ${outcome.error.message}`,
      );
      await sleep(delay);
    }
  };
}
