/**
 * Every error code paysync raises (src/errors.ts) and whether retrying can heal it, as data: the one retry
 * table. `isRetryable` (errors.ts), the HTTP client's per-attempt delay (upstream/retry-delay.ts) and the
 * job layer all read it, so the decision is made once, from the code, never by matching messages or
 * classes. On the ground floor beside errors.ts: it names codes only, and imports nothing.
 */

/** Whether retrying can heal a failure, and why: one row per error code. */
export interface RetryRule {
  retry: boolean;
  why: string;
}

/**
 * The retry decision, as data, for every error code paysync raises (src/errors.ts), used by the HTTP
 * client (per attempt) and by the job layer (per job). Retrying only what can heal keeps a bad key or a
 * bad request from hammering the service and tells the operator at once (principle 5).
 */
export const RETRY_BY_CODE = {
  UPSTREAM_UNAUTHORIZED: { retry: false, why: '401: the key is wrong; fix PAYMENTS_API_KEY' },
  UPSTREAM_FORBIDDEN: { retry: false, why: '403: the key lacks rights on this endpoint' },
  UPSTREAM_BAD_REQUEST: { retry: false, why: '400: the service refuses this request as sent' },
  UPSTREAM_UNEXPECTED_STATUS: {
    retry: false,
    why: '3xx, 404, 405…: a wrong base URL or path does not heal in seconds',
  },
  UPSTREAM_RATE_LIMITED: { retry: true, why: '429: heals after the Retry-After it names (a floor)' },
  UPSTREAM_SERVER_ERROR: { retry: true, why: '5xx or 408: the service may recover' },
  UPSTREAM_NETWORK: { retry: true, why: 'timeout, reset, refused connection: the network may recover' },
  UPSTREAM_PROTOCOL: { retry: true, why: 'a malformed body may be a transient fault of the service' },
  CIRCUIT_OPEN: {
    retry: true,
    why: 'the service is down (its circuit is open): work waits, one probe per stream per tick finds it back',
  },
  PAGINATION: { retry: true, why: 'paging did not end on evidence; a list shifting under it may settle' },
  WINDOW_INCOMPLETE: { retry: true, why: 'records fell short of the total; a later read may find them' },
  SERVICE_UNREACHABLE: { retry: true, why: 'PostgreSQL or Redis may come back' },
  CONFIG: { retry: false, why: 'a setting is wrong: fix it and restart' },
  USAGE: { retry: false, why: 'the command line is wrong' },
  MIGRATION: { retry: false, why: 'a migration cannot be applied safely: a person must look' },
  NOT_MIGRATED: { retry: false, why: 'the warehouse is not migrated: run `paysync migrate`' },
  PACK_ON_DISK: {
    retry: false,
    why: 'a published pack on disk is not as published (or not where it may be): a person must look',
  },
  PACK_MANIFEST_INVALID: { retry: false, why: 'a manifest on disk is not paysync’s: a person must look' },
  SIGNOFF_REFUSED: { retry: false, why: 'the day cannot be signed off as it is' },
} as const satisfies Record<string, RetryRule>;

export type ErrorCode = keyof typeof RETRY_BY_CODE;

/**
 * Anything without a code in the table: an error that is not paysync's own (a dropped PostgreSQL
 * connection, a Redis timeout, a programming error). Stated, not defaulted: retried within the job's
 * attempts (most such faults are transient), then reported with its message.
 */
export const UNKNOWN_CODE_RULE: RetryRule = {
  retry: true,
  why: 'not a paysync error code: retried within the attempts, then reported',
};

/** The rule of an error code (undefined or unknown: UNKNOWN_CODE_RULE). */
export function retryRuleOf(code: string | undefined): RetryRule {
  return code !== undefined && Object.hasOwn(RETRY_BY_CODE, code)
    ? RETRY_BY_CODE[code as ErrorCode]
    : UNKNOWN_CODE_RULE;
}
