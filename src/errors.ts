/**
 * paysync's error tree. Every error carries a stable `code`; whether a failure can heal by retrying is
 * decided once, from the code, by the table in src/error-codes.ts (`isRetryable` reads it) —
 * never by matching messages or classes elsewhere.
 * No message ever contains the API key: upstream errors are built from the endpoint path and the
 * service's own message only (see src/upstream/client.ts), and every message is scrubbed of every
 * configured key, in every form, as the error is made (scrub.ts).
 */
import { retryRuleOf } from './error-codes.js';
import { scrubRegisteredSecrets } from './scrub.js';

export class PaysyncError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    // scrubbed here, before the stack captures the message: no error can carry a key to Redis or a log
    super(scrubRegisteredSecrets(message), options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A setting is missing or malformed. Exit code 2, one line naming it. */
export class ConfigError extends PaysyncError {
  constructor(message: string) {
    super('CONFIG', message);
  }
}

/** Bad command-line usage. Exit code 2. */
export class UsageError extends PaysyncError {
  constructor(message: string) {
    super('USAGE', message);
  }
}

interface UpstreamContext {
  /** Source name, e.g. `default`. */
  source?: string;
  /** Endpoint path, e.g. `/api/paiements/organisations` (never the full URL with query). */
  endpoint: string;
}

export class UpstreamError extends PaysyncError {
  readonly endpoint: string;
  readonly source: string | undefined;
  readonly status: number | undefined;
  constructor(
    code: string,
    ctx: UpstreamContext & { status?: number },
    message: string,
    options?: { cause?: unknown },
  ) {
    const where = `${ctx.source ? `source ${ctx.source}, ` : ''}${ctx.endpoint}`;
    super(code, `${message} (${where})`, options);
    this.endpoint = ctx.endpoint;
    this.source = ctx.source;
    this.status = ctx.status;
  }
}

/** 401: key missing or invalid. Never retried. */
export class UpstreamAuthError extends UpstreamError {
  constructor(ctx: UpstreamContext, serviceMessage: string) {
    super(
      'UPSTREAM_UNAUTHORIZED',
      { ...ctx, status: 401 },
      `the service refused the API key: 401 ${serviceMessage}; check the key (PAYMENTS_API_KEY or the source's apiKeyEnv)`,
    );
  }
}

/** 403: key valid but not allowed on this resource. Never retried. */
export class UpstreamForbiddenError extends UpstreamError {
  constructor(ctx: UpstreamContext, serviceMessage: string) {
    super(
      'UPSTREAM_FORBIDDEN',
      { ...ctx, status: 403 },
      `the API key lacks permission: 403 ${serviceMessage}; use a key with rights on this endpoint, or the source's other scope`,
    );
  }
}

/** 400: the request was refused by the service's validation. Never retried. */
export class UpstreamBadRequestError extends UpstreamError {
  readonly messages: string[];
  constructor(ctx: UpstreamContext, messages: string[]) {
    super(
      'UPSTREAM_BAD_REQUEST',
      { ...ctx, status: 400 },
      `the service rejected the request: ${messages.join('; ')}`,
    );
    this.messages = messages;
  }
}

/** 429: too many requests. Retried after `Retry-After`. */
export class UpstreamRateLimitedError extends UpstreamError {
  readonly retryAfterMs: number | undefined;
  constructor(ctx: UpstreamContext, retryAfterMs: number | undefined) {
    super('UPSTREAM_RATE_LIMITED', { ...ctx, status: 429 }, 'the service is rate limiting (429)');
    this.retryAfterMs = retryAfterMs;
  }
}

/** 5xx or 408. Retried with backoff. */
export class UpstreamServerError extends UpstreamError {
  constructor(ctx: UpstreamContext, status: number) {
    super('UPSTREAM_SERVER_ERROR', { ...ctx, status }, `the service answered ${status}`);
  }
}

/** Another status (3xx, 404, 405…): the base URL or the path is wrong. Not retried. */
export class UpstreamUnexpectedStatusError extends UpstreamError {
  constructor(ctx: UpstreamContext, status: number) {
    super(
      'UPSTREAM_UNEXPECTED_STATUS',
      { ...ctx, status },
      `the service answered ${status}, which the interface does not use here: check the source's base URL (PAYMENTS_BASE_URL, or baseUrl in PAYSYNC_SOURCES_FILE)`,
    );
  }
}

/** Timeout, reset, refused connection. Retried with backoff. */
export class UpstreamNetworkError extends UpstreamError {
  constructor(ctx: UpstreamContext, detail: string, options?: { cause?: unknown }) {
    super('UPSTREAM_NETWORK', ctx, `could not reach the service: ${detail}`, options);
  }
}

/**
 * The request was not sent: the source's circuit is open (src/sync/circuit.ts), because the service failed
 * every recent attempt with a 5xx, a timeout or a lost connection. Retryable, but not by hammering: work
 * waits (jobs are put back without spending an attempt) and each tick sends one probe per stream.
 */
export class CircuitOpenError extends UpstreamError {
  /** The window reason of a run this error ends (src/sync/window-reasons.ts): an outage, not the day's fault. */
  readonly reason = 'CIRCUIT_OPEN';
  constructor(ctx: UpstreamContext, detail: string) {
    super('CIRCUIT_OPEN', ctx, `request not sent, the service is down: ${detail}`);
  }
}

/** The response was not what the interface allows (not JSON, not a list). Retried: it may be transient. */
export class UpstreamProtocolError extends UpstreamError {
  constructor(ctx: UpstreamContext, detail: string) {
    super('UPSTREAM_PROTOCOL', ctx, `the service sent an unexpected response: ${detail}`);
  }
}

/**
 * Paging could not end on evidence (page ignored, ceiling hit). Not retried blindly: reported. `reason`
 * is the window reason code (src/sync/window-reasons.ts) the window's sync-log row carries.
 */
export class PaginationError extends UpstreamError {
  readonly reason: string;
  constructor(ctx: UpstreamContext, detail: string, reason = 'PAGE_CEILING') {
    super('PAGINATION', ctx, detail);
    this.reason = reason;
  }
}

/** A window's records fell short of what the service reported, after re-reads and splits. */
export class WindowIncompleteError extends PaysyncError {
  constructor(message: string) {
    super('WINDOW_INCOMPLETE', message);
  }
}

/**
 * Whether retrying can heal this failure: the error's code looked up in the one retry table
 * (src/error-codes.ts); an error without a known code follows its stated UNKNOWN_CODE_RULE.
 */
export function isRetryable(error: unknown): boolean {
  return retryRuleOf(error instanceof PaysyncError ? error.code : undefined).retry;
}

/** A one-line description of any thrown value, safe to log. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

/** A migration cannot be applied safely (an applied file changed, a file is malformed). Never retried. */
export class MigrationError extends PaysyncError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('MIGRATION', message, options);
  }
}

/**
 * A request refused before sending because it breaks one of the service's documented validation rules;
 * the messages use the service's own wording. An UpstreamBadRequestError, so never retried.
 */
export class UpstreamRequestNotSentError extends UpstreamBadRequestError {
  readonly sent = false;
  constructor(ctx: UpstreamContext, messages: string[]) {
    super(ctx, messages);
    this.message = this.message.replace(
      'the service rejected the request',
      'request not sent, it breaks the service rules',
    );
  }
}

/** PostgreSQL or Redis cannot be reached at start-up. Exit code 2, with the address and how to start it. */
export class ServiceUnreachableError extends PaysyncError {
  constructor(message: string) {
    super('SERVICE_UNREACHABLE', message);
  }
}
