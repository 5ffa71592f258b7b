/**
 * Every reason a window (or transfers scan) can end without being complete, and every anomaly a window
 * can note, in ONE table: its code (stored in `reporting.sync_windows.reason_code`, counted by
 * `paysync_window_failures_total{reason}`), what it means, what ops should do, and whether it is an
 * outage. The sync core picks a code, the warehouse stores it, `status`, the status page, the metrics
 * and docs/operations.md read this table (test/sync/window-reasons.test.ts checks the docs against it).
 *
 * - `failure` codes end a window `incomplete` (the reads ran, the evidence fell short) or `failed` (an
 *   error ended the run). `outage` ones say the service could not be reached or would not answer: the
 *   circuit breaker counts them, and they never count towards `BLOCKED_AFTER` (a day is not to blame for
 *   the service being down). The others count: a day whose windows failed `BLOCKED_AFTER` times in a row
 *   for them is shown `blocked`.
 * - `note` codes never fail a window: they record something odd the service did that paysync handled
 *   (in `sync_windows.anomalies`), so ops can see it and tell the service's owners.
 */
import type { PagingFailure } from '../upstream/paging.js';

export interface WindowReason {
  /** The human meaning, one sentence. */
  meaning: string;
  /** What ops should do about it. */
  action: string;
  /** `failure`: the window is not complete; `note`: an anomaly on a window that may well be complete. */
  severity: 'failure' | 'note';
  /** The service is down or unreachable: counted by the circuit breaker, never towards BLOCKED_AFTER. */
  outage: boolean;
  /** Counted towards BLOCKED_AFTER (failures that are neither outages nor paysync's own infrastructure). */
  blocksDay: boolean;
}

const outage = (meaning: string, action: string): WindowReason => ({
  meaning,
  action,
  severity: 'failure',
  outage: true,
  blocksDay: false,
});
const failure = (meaning: string, action: string): WindowReason => ({
  meaning,
  action,
  severity: 'failure',
  outage: false,
  blocksDay: true,
});
const note = (meaning: string, action: string): WindowReason => ({
  meaning,
  action,
  severity: 'note',
  outage: false,
  blocksDay: false,
});

export const WINDOW_REASONS = {
  // ---- outages: the service is down; paysync backs off and reads the window again when it answers ----
  SERVICE_UNAVAILABLE: outage(
    'the service answered 5xx (or 408) to every retry',
    'nothing at first: the window is read again once the service answers; if it lasts, tell the service’s operators',
  ),
  CONNECTION_FAILED: outage(
    'no answer: timeouts, reset or refused connections on every retry',
    'check the network path to the service (DNS, firewall, proxy) and the service itself; the window is read again once it answers',
  ),
  RATE_LIMITED: outage(
    'the service answered 429 to every retry',
    'lower UPSTREAM_RPS (or ask the service for a higher quota); the window is read again',
  ),
  CIRCUIT_OPEN: outage(
    'not read: the source’s circuit is open after consecutive outage failures, and only a probe per stream is sent each tick',
    'nothing: the first probe the service answers closes the circuit and the window is read within two ticks',
  ),
  // ---- the service refuses paysync's requests: a setting to fix ----
  KEY_REFUSED: failure(
    'the service refused the API key (401)',
    'set the right key (PAYMENTS_API_KEY or the source’s apiKeyEnv) and restart the workers',
  ),
  KEY_FORBIDDEN: failure(
    'the API key lacks permission on this list (403)',
    'use a key with rights on the list, or the source’s other scope (PAYMENTS_SCOPE)',
  ),
  REQUEST_REFUSED: failure(
    'the service refused the request as sent (400)',
    'check `paysync probe` and the source’s settings; report it with the window to paysync’s maintainers',
  ),
  UNEXPECTED_STATUS: failure(
    'the service answered a status the interface does not use here (3xx, 404, 405…)',
    'check the source’s base URL (PAYMENTS_BASE_URL or baseUrl in PAYSYNC_SOURCES_FILE)',
  ),
  // ---- the service answers, but its list cannot be read to the end on evidence ----
  TOTAL_SHORT: failure(
    'fewer distinct records arrived than the `total` the service reported, after re-reads and splits',
    'nothing at first: later ticks read the window again; if it stays, compare with `paysync reconcile --day D` and tell the service’s owners',
  ),
  LIST_SHIFTING: failure(
    'no `total` sent (bare arrays) and every re-read found records the earlier ones had not',
    'nothing at first: the window is read again; if it stays, the service’s list moves while paging: tell its owners',
  ),
  DUPLICATES_UNCONFIRMED: failure(
    'the list names some records more than once, and two full reads did not return the same ids and copies',
    'nothing at first: the window is read again until two reads agree; if it stays, tell the service’s owners',
  ),
  PAGE_IGNORED: failure(
    'the service ignores `page`: a page came back with exactly the records of the previous or the first page',
    'tell the service’s owners; `paysync probe` shows how it pages',
  ),
  PAGE_CYCLE: failure(
    'paging went back to earlier pages: a page held only records this read had already seen',
    'tell the service’s owners: its paging cycles; the window is read again later',
  ),

  TRICKLE: failure(
    'bare arrays kept bringing a few new records per page, past the page budget the window’s earlier reads allow',
    'tell the service’s owners: its paging trickles; the window is read again later',
  ),
  PAGE_CEILING: failure(
    'the read reached the page ceiling without reaching the end of the list',
    'the service misbehaves or the window is huge: check `paysync probe`; narrow the range',
  ),
  TOTAL_RUNAWAY: failure(
    'the service’s `total` kept growing while paging, far past its first figure',
    'nothing at first: the window is read again; if it stays, tell the service’s owners',
  ),
  MALFORMED_RESPONSE: failure(
    'a response was not what the interface allows (not JSON, not a list, far more items than asked, a body over UPSTREAM_MAX_BODY)',
    'the window is read again; if it stays, look at the logged detail and tell the service’s owners',
  ),
  // ---- paysync's own side ----
  WAREHOUSE_WRITE_FAILED: failure(
    'PostgreSQL refused the write of the window’s rows or of its sync-log row',
    'read the logged PostgreSQL message; free space, permissions or a migration may be needed',
  ),
  WAREHOUSE_UNAVAILABLE: {
    ...failure(
      'PostgreSQL or Redis could not be reached during the window',
      'bring PostgreSQL or Redis back (`paysync status` names which); the window is read again',
    ),
    blocksDay: false,
  },
  INTERNAL_ERROR: failure(
    'an error paysync does not classify ended the window',
    'look at the logged error and report it to paysync’s maintainers; the window is read again',
  ),
  UNCLASSIFIED: failure(
    'recorded before windows carried a reason code; the detail says why',
    'nothing: the next run of the window records its reason',
  ),
  // ---- notes: anomalies handled; the window may be complete ----
  DUPLICATES_LISTED: note(
    'the list named some records more than once (`total` counting every copy); two reads agreed, so the window is complete',
    'nothing; the row’s `duplicates` says how many copies; reconcile counts them the same way and flags a status whose count shows a copy standing in place of a missing record (docs/operations.md, copies in reconcile)',
  ),
  CONTRADICTING_COPIES: note(
    'two copies of one record differed (on different pages); the newer `updatedAt` was kept, a tie quarantined',
    'nothing: both versions are in sync_rejects (and rejects.csv) with the reason; tell the service’s owners',
  ),
  IMPOSSIBLE_TOTAL: note(
    'the service sent a `total` no list can have (negative, fractional, beyond 2^31): treated as no total',
    'nothing: the window was judged as a bare array is; tell the service’s owners',
  ),
  PAST_TOTAL_PAGES: note(
    'the service served pages past its own `totalPages` (or went round again) after every record of its `total` had arrived: the read ended there',
    'nothing: the window is complete; tell the service’s owners that its paging does not end',
  ),
  IMPOSSIBLE_TIMESTAMP: note(
    'records carried a time later than now plus FUTURE_TOLERANCE or before 2000-01-01: quarantined, read again later',
    'nothing: the record lands when the service sends its true state; the rejects name each record',
  ),
} as const satisfies Record<string, WindowReason>;

export type ReasonCode = keyof typeof WINDOW_REASONS;

/** The codes of anomalies a window run notes (severity `note`; test/sync/window-reasons.test.ts checks). */
export const NOTE_CODES = [
  'DUPLICATES_LISTED',
  'CONTRADICTING_COPIES',
  'IMPOSSIBLE_TOTAL',
  'IMPOSSIBLE_TIMESTAMP',
  'PAST_TOTAL_PAGES',
] as const satisfies readonly ReasonCode[];
export type NoteCode = (typeof NOTE_CODES)[number];

/** Every code the pager can fail with is in the table (a compile-time check). */
const PAGING_CODES_ARE_REASONS: Record<PagingFailure, ReasonCode> = {
  PAGE_IGNORED: 'PAGE_IGNORED',
  PAGE_CYCLE: 'PAGE_CYCLE',
  TRICKLE: 'TRICKLE',
  PAGE_CEILING: 'PAGE_CEILING',
  TOTAL_RUNAWAY: 'TOTAL_RUNAWAY',
};

export const REASON_CODES = Object.keys(WINDOW_REASONS) as ReasonCode[];
void PAGING_CODES_ARE_REASONS;

export function isReasonCode(code: unknown): code is ReasonCode {
  return typeof code === 'string' && Object.hasOwn(WINDOW_REASONS, code);
}

/** The table's row of a code; an unknown code (a newer worker's) reads as UNCLASSIFIED. */
export function reasonOf(code: string | null | undefined): WindowReason & { code: ReasonCode } {
  const known: ReasonCode = isReasonCode(code) ? code : 'UNCLASSIFIED';
  return { code: known, ...WINDOW_REASONS[known] };
}

/** Whether a failure with this code is an outage of the service (the circuit breaker's count). */
export function isOutage(code: string | null | undefined): boolean {
  return isReasonCode(code) && WINDOW_REASONS[code].outage;
}

/** Whether a failure with this code counts towards BLOCKED_AFTER. */
export function blocksDay(code: string | null | undefined): boolean {
  return isReasonCode(code) ? WINDOW_REASONS[code].blocksDay : true;
}

/** By paysync error code (src/error-codes.ts): the reason a window ended by that error has. */
const BY_ERROR_CODE: Record<string, ReasonCode> = {
  UPSTREAM_SERVER_ERROR: 'SERVICE_UNAVAILABLE',
  UPSTREAM_NETWORK: 'CONNECTION_FAILED',
  UPSTREAM_RATE_LIMITED: 'RATE_LIMITED',
  UPSTREAM_UNAUTHORIZED: 'KEY_REFUSED',
  UPSTREAM_FORBIDDEN: 'KEY_FORBIDDEN',
  UPSTREAM_BAD_REQUEST: 'REQUEST_REFUSED',
  UPSTREAM_UNEXPECTED_STATUS: 'UNEXPECTED_STATUS',
  UPSTREAM_PROTOCOL: 'MALFORMED_RESPONSE',
  CIRCUIT_OPEN: 'CIRCUIT_OPEN',
  SERVICE_UNREACHABLE: 'WAREHOUSE_UNAVAILABLE',
  WINDOW_INCOMPLETE: 'TOTAL_SHORT',
};

/** Node's and pg's connection failures: PostgreSQL or Redis went away mid-window. */
const CONNECTION_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND']);

/**
 * The reason code of an error that ended a window run. Pure: reads the error's `code` (and a pagination
 * error's `reason`); a PostgreSQL error (a five-character SQLSTATE) is a refused write, except the
 * connection classes 08 and 57 (server gone: unavailable).
 */
export function reasonOfError(error: unknown): ReasonCode {
  const e = error as { code?: unknown; reason?: unknown; message?: unknown; severity?: unknown } | null;
  if (e && isReasonCode(e.reason)) return e.reason;
  const code = typeof e?.code === 'string' ? e.code : undefined;
  if (code === undefined) {
    if (typeof e?.message === 'string' && /Connection terminated|connection.*closed/i.test(e.message))
      return 'WAREHOUSE_UNAVAILABLE';
    return 'INTERNAL_ERROR';
  }
  const mapped = BY_ERROR_CODE[code];
  if (mapped) return mapped;
  if (isReasonCode(code)) return code; // an error named after its reason (CircuitOpenError: CIRCUIT_OPEN)
  if (CONNECTION_ERRNOS.has(code)) return 'WAREHOUSE_UNAVAILABLE';
  // a PostgreSQL error (pg's DatabaseError carries the SQLSTATE and a severity)
  if (typeof e?.severity === 'string' && /^[0-9A-Z]{5}$/.test(code))
    return /^(08|57)/.test(code) ? 'WAREHOUSE_UNAVAILABLE' : 'WAREHOUSE_WRITE_FAILED';
  return 'INTERNAL_ERROR';
}

/** The kind column of the docs table: failure (outage / counts towards blocked) or note. */
function kindOf(r: WindowReason): string {
  if (r.severity === 'note') return 'note';
  if (r.outage) return 'failure, outage';
  return r.blocksDay ? 'failure, counts towards blocked' : 'failure';
}

/**
 * The table as docs/operations.md prints it (test/sync/window-reasons.test.ts checks that the docs hold
 * exactly these lines, so the docs cannot drift from the code).
 */
export function reasonsMarkdown(): string {
  const rows = REASON_CODES.map((code) => {
    const r: WindowReason = WINDOW_REASONS[code];
    return `| \`${code}\` | ${kindOf(r)} | ${r.meaning} | ${r.action} |`;
  });
  return ['| code | kind | meaning | what to do |', '|---|---|---|---|', ...rows].join('\n');
}
