/**
 * The probe's HTTP adapter: the sync client for ordinary reads, plus `rawList` for the two requests the
 * sync client refuses to make on purpose (a list without `size`, and dates on the transfer list). Both
 * go through the same sender, so they share the retries, the rate ceiling and the key handling of
 * request.ts; the URL still carries only query parameter names the interface documents.
 */
import { createUpstreamClient, ENDPOINTS, type ClientOptions, type ListPage } from '../upstream/client.js';
import { UpstreamProtocolError } from '../errors.js';
import { parseExactJson } from '../upstream/exact-json.js';
import { toListPage } from '../upstream/list-page.js';
import { createSender, type Parsed, type RawResponse } from '../upstream/request.js';
import { DEFAULT_RETRY_POLICY } from '../upstream/retry-delay.js';
import type { ProbeClient, ProbeStream } from './probe.js';

const DEFAULT_TIMEOUT_MS = 30_000;

function rawListParser(ctx: { endpoint: string; source: string }, params: Record<string, number>) {
  // `requested` records what was asked; an absent size is recorded as 0 (nothing was asked).
  const requested = { page: params.page ?? 0, size: params.size ?? 0 };
  return (response: RawResponse): Parsed<ListPage> => {
    let body: unknown;
    try {
      body = parseExactJson(response.body);
    } catch {
      return { ok: false, error: new UpstreamProtocolError(ctx, 'the body is not JSON') };
    }
    const page = toListPage(body, requested);
    return page.ok
      ? { ok: true, value: page.page }
      : { ok: false, error: new UpstreamProtocolError(ctx, page.detail) };
  };
}

function endpointOf(options: ClientOptions, stream: ProbeStream): string {
  if (stream === 'transfers') return ENDPOINTS.transfers;
  return options.source.scope === 'api-key' ? ENDPOINTS.paymentsByApiKey : ENDPOINTS.paymentsByOrganisation;
}

export function createProbeClient(options: ClientOptions): ProbeClient {
  const client = createUpstreamClient(options);
  const send = createSender({
    source: options.source,
    timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
    policy: {
      retries: options.retries ?? DEFAULT_RETRY_POLICY.retries,
      baseMs: options.backoff?.baseMs ?? DEFAULT_RETRY_POLICY.baseMs,
      maxMs: options.backoff?.maxMs ?? DEFAULT_RETRY_POLICY.maxMs,
      maxRetryAfterMs: options.backoff?.maxRetryAfterMs ?? DEFAULT_RETRY_POLICY.maxRetryAfterMs,
    },
    beforeRequest: options.beforeRequest,
    onResponse: options.onResponse,
    log: options.log,
  });
  return {
    listPayments: (q) => client.listPayments(q),
    listTransfers: (q) => client.listTransfers(q),
    rawList: async (stream, params) => {
      const endpoint = endpointOf(options, stream);
      return send({
        method: 'GET',
        endpoint,
        searchParams: params,
        idempotent: true,
        parse: rawListParser({ endpoint, source: options.source.name }, params),
      });
    },
  };
}
