/**
 * Turns a failed attempt (a status that is not 2xx, or a transport failure) into paysync's error tree.
 * Pure. The errors are built from the endpoint path and the service's own message only, with the API key
 * scrubbed from that message in every form (a service could echo the key it refused, trimmed, URL-encoded
 * or JSON-escaped) and URLs stripped of credentials and queries; got's errors, which carry the request
 * options and so the `X-API-Key` header, are never attached as `cause`.
 */
import {
  UpstreamAuthError,
  UpstreamBadRequestError,
  UpstreamForbiddenError,
  UpstreamNetworkError,
  UpstreamRateLimitedError,
  UpstreamServerError,
  UpstreamUnexpectedStatusError,
  type UpstreamError,
} from '../errors.js';
import { ErrorBodySchema } from './schemas.js';
import { scrubSecrets, stripUrlSecrets } from '../scrub.js';

export interface AttemptContext {
  endpoint: string;
  source?: string;
}

/** Longest piece of a service message kept in an error (the bodies of other statuses are not documented). */
const MAX_MESSAGE = 300;

/** `text` without the key in any form (scrub.ts) and without credentials or queries in its URLs. */
export function scrub(text: string, key: string): string {
  return stripUrlSecrets(scrubSecrets(text, key.length > 0 ? [key] : []));
}

function clip(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > MAX_MESSAGE ? `${line.slice(0, MAX_MESSAGE)}…` : line;
}

/** The service's message(s) from an error body (`{ statusCode, message, error }`), or null if not one. */
export function serviceMessages(bodyText: string): string[] | null {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    return null;
  }
  const parsed = ErrorBodySchema.partial().safeParse(body);
  if (!parsed.success) return null;
  const { message, error } = parsed.data;
  if (Array.isArray(message)) return message.length > 0 ? message : error ? [error] : null;
  if (typeof message === 'string' && message.length > 0) return [message];
  return error ? [error] : null;
}

/** The error for a non-2xx status. `key` is only used to scrub it from the service's words. */
export function errorForStatus(
  ctx: AttemptContext,
  status: number,
  bodyText: string,
  key: string,
  retryAfterMs?: number,
): UpstreamError {
  const fallback = status === 401 ? 'Unauthorized' : status === 403 ? 'Forbidden' : 'Bad Request';
  const messages = (serviceMessages(bodyText) ?? [fallback]).map((m) => clip(scrub(m, key)));
  switch (status) {
    case 400:
      return new UpstreamBadRequestError(ctx, messages);
    case 401:
      return new UpstreamAuthError(ctx, messages.join('; '));
    case 403:
      return new UpstreamForbiddenError(ctx, messages.join('; '));
    case 429:
      return new UpstreamRateLimitedError(ctx, retryAfterMs);
    default:
      return status >= 500 || status === 408
        ? new UpstreamServerError(ctx, status)
        : new UpstreamUnexpectedStatusError(ctx, status);
  }
}

/** The error for a transport failure (got's RequestError or anything thrown while sending). */
export function errorForTransport(
  ctx: AttemptContext,
  error: unknown,
  timeoutMs: number,
  key: string,
): UpstreamNetworkError {
  const code = (error as { code?: unknown } | null)?.code;
  const name = (error as { name?: unknown } | null)?.name;
  if (name === 'TimeoutError')
    return new UpstreamNetworkError(ctx, `no answer within ${timeoutMs} ms (timeout)`);
  const message = error instanceof Error ? clip(scrub(error.message, key)) : 'unknown failure';
  const labelled = typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message;
  return new UpstreamNetworkError(ctx, labelled);
}

/** The transport error code, if any (ECONNREFUSED, ECONNRESET, ETIMEDOUT…). */
export function transportCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}
