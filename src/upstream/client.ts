/**
 * The upstream client: the interface's four endpoints over got, each call retried as retry-delay.ts
 * decides (request.ts). What it guarantees:
 * - `X-API-Key` on every call, never in a URL, an error, a log line or a stack.
 * - List bodies parsed with parseExactJson (amounts stay exact) and normalised to one ListPage, whichever
 *   shape the service chose (an open point); a body that is neither shape is a retryable protocol error.
 * - Any 2xx is success (success codes are an open point).
 * - `initializePayment` checks its body with the service's own wording before sending, and is not
 *   repeated after an answer that leaves its effect unknown (it creates a payment).
 */
import { hash } from 'node:crypto';
import type { Source } from '../config/settings.js';
import { UpstreamProtocolError, UpstreamRequestNotSentError } from '../errors.js';
import type { Logger } from '../log.js';
import { parseExactJson } from './exact-json.js';
import { toListPage, type ListPage } from './list-page.js';
import {
  createSender,
  type AttemptWatch,
  type BeforeRequest,
  type Parsed,
  type RawResponse,
  type Send,
} from './request.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry-delay.js';
import { InitializedPaymentSchema, type InitializedPayment, type InitializePaymentBody } from './schemas.js';

export type { ListPage } from './list-page.js';
export type { AttemptWatch } from './request.js';
export type { InitializedPayment, InitializePaymentBody } from './schemas.js';

/** dateFrom/dateTo in Unix seconds. */
export interface ListQuery {
  page: number;
  size: number;
  transaction_type?: string;
  status?: string;
  dateFrom?: number;
  dateTo?: number;
  /** Compute the body's fingerprint (`ListPage.digest`), so that a later read can recognise the page. */
  fingerprint?: boolean;
  /**
   * A page already read, looked up by the fingerprint of this body: when it answers, that page is returned
   * instead of parsing the same bytes again (a confirmation read of bare arrays, read-window.ts).
   */
  known?: (digest: string) => ListPage | null;
}

export interface ClientOptions {
  source: Source;
  timeoutMs?: number;
  /** Largest response body, counted after decompression (UPSTREAM_MAX_BODY, default 32 MiB). */
  maxBodyBytes?: number;
  /** Retries after the first attempt (UPSTREAM_RETRIES, default 5). */
  retries?: number;
  /** called before every HTTP attempt (the shared rate ceiling and the in-flight limit; see BeforeRequest) */
  beforeRequest?: BeforeRequest;
  /** sees every attempt, before and after (the source's circuit breaker, src/sync/circuit.ts) */
  watch?: AttemptWatch;
  /** called after every HTTP attempt */
  onResponse?: (info: { endpoint: string; status: number | 'network'; attempt: number; ms: number }) => void;
  log?: Logger;
  /** for tests: scale all backoff delays */
  backoff?: { baseMs?: number; maxMs?: number; maxRetryAfterMs?: number };
}

export interface UpstreamClient {
  /** Endpoint chosen by source.scope: 'organisation' → /api/paiements/organisations, 'api-key' → /api/paiements/api-key. */
  listPayments(query: ListQuery): Promise<ListPage>;
  listTransfers(query: { page: number; size: number }): Promise<ListPage>;
  initializePayment(body: InitializePaymentBody): Promise<InitializedPayment>;
}

export const ENDPOINTS = {
  paymentsByOrganisation: '/api/paiements/organisations',
  paymentsByApiKey: '/api/paiements/api-key',
  transfers: '/api/transferts',
  initialize: '/api/paiements/initialize',
} as const;

const DEFAULT_TIMEOUT_MS = 30_000;

/**
 * Most items a list page may hold for `size` asked. A service may cap `size` or ignore it and use its own
 * default (an open point), so some slack is allowed; 150,000 items for 100 asked is not a page, it is a
 * broken or hostile answer (appended to a read, it would overflow the stack).
 */
export function maxItemsFor(size: number): number {
  return Math.max(2 * size, size + 1_000);
}

function parseJson(ctx: { endpoint: string; source: string }, body: string): Parsed<unknown> {
  try {
    return { ok: true, value: parseExactJson(body) };
  } catch {
    return {
      ok: false,
      error: new UpstreamProtocolError(ctx, `the body is not JSON (${body.length} bytes)`),
    };
  }
}

function listParser(
  ctx: { endpoint: string; source: string },
  requested: ListPage['requested'],
  recognise: Pick<ListQuery, 'fingerprint' | 'known'> = {},
) {
  return (response: RawResponse): Parsed<ListPage> => {
    // SHA-256 of the body as received: equal digests, equal bytes, equal records (0.7 ms a 1000-record page)
    const digest =
      recognise.fingerprint || recognise.known ? hash('sha256', response.body, 'base64') : undefined;
    const known = digest === undefined ? null : (recognise.known?.(digest) ?? null);
    if (known) return { ok: true, value: known };
    const json = parseJson(ctx, response.body);
    if (!json.ok) return json;
    const page = toListPage(json.value, requested);
    if (!page.ok) return { ok: false, error: new UpstreamProtocolError(ctx, page.detail) };
    const count = page.page.items.length;
    if (count > maxItemsFor(requested.size)) {
      const detail = `a page of ${count} items when ${requested.size} were asked (at most ${maxItemsFor(requested.size)} accepted)`;
      return { ok: false, error: new UpstreamProtocolError(ctx, detail) };
    }
    return { ok: true, value: digest === undefined ? page.page : { ...page.page, digest } };
  };
}

function seconds(name: string, value: number): number {
  // Unix seconds, as the interface documents; a millisecond value here is a caller's bug, not a query.
  if (!Number.isSafeInteger(value) || value < 0 || value >= 1e11) {
    throw new RangeError(`${name} must be whole Unix seconds (got ${value})`);
  }
  return value;
}

function pageParams(query: { page: number; size: number }): Record<string, number> {
  if (!Number.isSafeInteger(query.page) || query.page < 0)
    throw new RangeError(`page must be >= 0 (got ${query.page})`);
  if (!Number.isSafeInteger(query.size) || query.size < 1)
    throw new RangeError(`size must be >= 1 (got ${query.size})`);
  return { page: query.page, size: query.size };
}

/** Only the documented parameters, only when set. */
export function paymentSearchParams(query: ListQuery): Record<string, string | number> {
  const params: Record<string, string | number> = pageParams(query);
  if (query.transaction_type !== undefined) params.transaction_type = query.transaction_type;
  if (query.status !== undefined) params.status = query.status;
  if (query.dateFrom !== undefined) params.dateFrom = seconds('dateFrom', query.dateFrom);
  if (query.dateTo !== undefined) params.dateTo = seconds('dateTo', query.dateTo);
  return params;
}

/**
 * The service's two validation rules, in its own words, so an invalid payment is refused without a
 * request. `extra_data` has no documented rule beyond being an object.
 */
export function initializeBodyProblems(body: InitializePaymentBody): string[] {
  const problems: string[] = [];
  const { amount, description, extra_data: extra } = body as Partial<Record<string, unknown>>;
  if (typeof amount !== 'number' || !Number.isFinite(amount) || amount <= 0) {
    problems.push('amount must be a positive number');
  }
  if (typeof description !== 'string' || description.length === 0)
    problems.push('description should not be empty');
  if (extra !== undefined && (extra === null || typeof extra !== 'object' || Array.isArray(extra))) {
    problems.push('extra_data must be an object');
  }
  return problems;
}

function initializeParser(ctx: { endpoint: string; source: string }) {
  return (response: RawResponse): Parsed<InitializedPayment> => {
    const json = parseJson(ctx, response.body);
    if (!json.ok) return json;
    const result = InitializedPaymentSchema.safeParse(json.value);
    if (result.success) return { ok: true, value: result.data };
    const fields = [...new Set(result.error.issues.map((issue) => issue.path.join('.') || '(body)'))];
    return {
      ok: false,
      error: new UpstreamProtocolError(ctx, `initialize answered without a valid ${fields.join(', ')}`),
    };
  };
}

function retryPolicy(options: ClientOptions): RetryPolicy {
  return {
    retries: options.retries ?? DEFAULT_RETRY_POLICY.retries,
    baseMs: options.backoff?.baseMs ?? DEFAULT_RETRY_POLICY.baseMs,
    maxMs: options.backoff?.maxMs ?? DEFAULT_RETRY_POLICY.maxMs,
    maxRetryAfterMs: options.backoff?.maxRetryAfterMs ?? DEFAULT_RETRY_POLICY.maxRetryAfterMs,
  };
}

function listFrom(
  send: Send,
  source: string,
  endpoint: string,
  params: Record<string, string | number>,
  size: number,
  page: number,
  recognise?: Pick<ListQuery, 'fingerprint' | 'known'>,
) {
  const requested = { page, size };
  return send({
    method: 'GET',
    endpoint,
    searchParams: params,
    idempotent: true,
    parse: listParser({ endpoint, source }, requested, recognise),
  });
}

export function createUpstreamClient(options: ClientOptions): UpstreamClient {
  const { source } = options;
  const send = createSender({
    source,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    maxBodyBytes: options.maxBodyBytes,
    policy: retryPolicy(options),
    beforeRequest: options.beforeRequest,
    watch: options.watch,
    onResponse: options.onResponse,
    log: options.log,
  });
  const paymentsEndpoint =
    source.scope === 'api-key' ? ENDPOINTS.paymentsByApiKey : ENDPOINTS.paymentsByOrganisation;

  return {
    // async, so a bad query rejects like every other failure instead of throwing synchronously.
    listPayments: async (query) =>
      listFrom(
        send,
        source.name,
        paymentsEndpoint,
        paymentSearchParams(query),
        query.size,
        query.page,
        query,
      ),
    listTransfers: async (query) =>
      listFrom(send, source.name, ENDPOINTS.transfers, pageParams(query), query.size, query.page),
    async initializePayment(body) {
      const ctx = { endpoint: ENDPOINTS.initialize, source: source.name };
      const problems = initializeBodyProblems(body);
      if (problems.length > 0) throw new UpstreamRequestNotSentError(ctx, problems);
      return send({
        method: 'POST',
        endpoint: ctx.endpoint,
        json: body,
        idempotent: false,
        parse: initializeParser(ctx),
      });
    },
  };
}
