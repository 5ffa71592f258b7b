/**
 * The simulator's public contract (src/sim/). Tests, the demo and the benchmarks start it in-process with
 * `startSimulator(options)` (src/sim/server.ts), or as `paysync sim` in its own process and steer it over
 * its control routes (`/__sim/...`, see server.ts).
 */

/** Which list shape the list endpoints answer with (an open point of the interface). */
export type ListShape = 'array' | 'wrapper' | 'alternate';
/** Order of listed items (an open point). `unordered` is a stable, seeded shuffle. */
export type Ordering = 'asc' | 'desc' | 'unordered';

export type SimStream = 'payments' | 'transfers';
/** What the second listing of a record changes: nothing, its status, or its amount (integer part + 1). */
export type CopyVariant = 'identical' | 'status' | 'amount';
/** The second listing's `updatedAt` against the first's: equal (a tie), one second later, or earlier. */
export type CopyClock = 'same' | 'later' | 'earlier';
/** What a page past the end of the list holds (see `pastEnd`). */
export type PastEnd = 'empty' | 'repeat-last' | 'wrap';
/** A whole-service outage (see `outage`). */
export type Outage = 'none' | 'unavailable' | 'reset' | 'refused';
/** A known field's new shape: left out, its JSON text as a string, null, or the number 1. */
export type FieldShape = 'missing' | 'string' | 'null' | 'number';
export interface FieldChange {
  stream: SimStream;
  /** A field of the interface's Payment or Transfer. */
  field: string;
  to: FieldShape;
  /** Fraction (0..1) of records changed, chosen by id and seed (the same records on every read). */
  rate: number;
}
/** Served timestamps of one record, ISO 8601 text (e.g. `FAR_FUTURE` in switches.ts). */
export interface TimestampOverride {
  createdAt?: string;
  updatedAt?: string;
}
/** Where the caller's API key is echoed in a payment. */
export type KeyEcho = 'api_key_id' | 'description' | 'extra_data';

/**
 * Switches for every open point of the interface, for faults and for anomalies a service can show within
 * its interface. All can change while running (`setSwitches`, `POST /__sim/switches`), each is
 * deterministic from the seed and the requests, and each defaults to the plain behaviour.
 *
 * What is served is not the truth: `payments()`/`transfers()` stay each record's true state (copies,
 * timestamp overrides, field changes, extra fields and echoed keys are applied on serving only). Malformed
 * records (`malformed`) are served as they are, untouched by the record switches.
 */
export interface SimSwitches {
  shape: ListShape;
  /** Largest page the service serves; a larger `size` is silently capped. `null`: no cap. */
  pageCap: number | null;
  /** Page size when the request has no `size`. */
  defaultPageSize: number;
  /** Whether a record created exactly at `dateFrom` (seconds) is included. */
  dateFromInclusive: boolean;
  /** Whether a record created exactly at `dateTo` (seconds) is included (compared on whole seconds). */
  dateToInclusive: boolean;
  /** Order of the payment lists. */
  paymentOrder: Ordering;
  /** Order of the transfer list. */
  transferOrder: Ordering;
  /** The service ignores `dateFrom`/`dateTo` (answers as if absent). */
  ignoreDateFilter: boolean;
  /** The service ignores `page` (always answers page 0). */
  ignorePage: boolean;
  /** Fraction (0..1) of list/initialize requests answered 429 with `Retry-After`. */
  rateLimitRate: number;
  /** Seconds sent in `Retry-After` with a 429. */
  retryAfterSeconds: number;
  /** Fraction (0..1) of requests answered 500/502/503. */
  serverErrorRate: number;
  /** Fraction (0..1) of requests delayed by `slowMs` before answering. */
  slowRate: number;
  slowMs: number;
  /** Fraction (0..1) of requests whose connection is destroyed without an answer. */
  resetRate: number;
  /** Fraction (0..1) of list requests answered 200 with a body that is not JSON. */
  notJsonRate: number;
  /** Number added to the wrapper's `total` (a lying total). */
  totalOffset: number;
  /** After each list page is served, this many new payments are created inside the requested window. */
  driftPerPage: number;
  /**
   * After each transfers page is served, this many new transfers appear with a `createdAt` in the past
   * day (late arrivals): an oldest-first list shifts under the pager.
   */
  transferDriftPerPage: number;
  /** HTTP status of a successful initialize (200 or 201: not shown by the interface). */
  initializeStatus: 200 | 201;

  // Service anomalies: records listed twice, impossible totals and timestamps, paging that does not end.
  /** Fraction (0..1) of records listed twice, chosen by id and seed (the same ones on every read). */
  duplicateRate: number;
  /** Ids listed twice, besides `duplicateRate`'s. `total` counts both copies. */
  duplicateIds: string[];
  /**
   * Where the second listing goes: after `duplicateOffset - 1` other records of the list (1: right
   * after the original, on the same page unless the original ends its page; a page size or more: on a
   * later page); past the end of the list it comes last.
   */
  duplicateOffset: number;
  /**
   * A second listing takes the place of the record listed there, which is not listed at all (a paging
   * bug): the list keeps its length and `total` is the true count, so one list cannot tell the copy from
   * a record listed twice with `total` counting both. Counts by status stay true (reconcile's evidence).
   */
  duplicateInPlace: boolean;
  /** What the second listing changes (`copies()` shows each pair). */
  copyVariant: CopyVariant;
  copyUpdatedAt: CopyClock;
  /** Replaces the wrapper's `total` (e.g. 3e9, -5, 42.5); `totalPages` is `ceil(total / size)`. */
  totalOverride: number | null;
  /**
   * Per record id: timestamps served in place of the true ones (the record stays listed by its true
   * `createdAt`). Removing an id is the service fixing the record: from then on its `updatedAt` is at
   * least the simulated now of the removal, so its true state reads as a newer update.
   */
  timestampOverrides: Record<string, TimestampOverride>;
  /**
   * A page past the end of the list: `empty`; `repeat-last`, its last `size` records (a full page of
   * records already served, the same every time); `wrap`, a full page taken round the list from where
   * the page would start (endless, and when the list is longer than a page never the page before).
   */
  pastEnd: PastEnd;
  /**
   * Pages from `after` on repeat pages `back`..`after - 1` in turn, for ever (page `after` is page
   * `back`): with 1 <= back <= after - 2 a cycle to neither the first nor the previous page.
   */
  pageCycle: { after: number; back: number } | null;
  /**
   * Page p >= 1 starts at position p × `trickle` instead of p × size: with 1, each full page brings one
   * record not served before and repeats the rest (page 0 is a normal page).
   */
  trickle: number | null;
  /**
   * Every API request: `unavailable`, answered 503; `reset`, its connection destroyed unanswered;
   * `refused`, the port closed (ECONNREFUSED; such attempts never arrive, so they are not logged; await
   * `settled()` after switching to or from it; in-process only: the control routes share the port).
   */
  outage: Outage;

  // Throughput.
  /** Fixed delay (ms) before every answered list request (on top of any `slowRate` delay). */
  latencyMs: number;
  /**
   * A service-side rate limit: 429 with `Retry-After: retryAfterSeconds` when more than
   * `rateLimitRps × rateLimitWindowMs / 1000` requests (this one and any answered 429 included) arrived
   * in the trailing `rateLimitWindowMs`, counted from before it was switched on too. `null`: none.
   */
  rateLimitRps: number | null;
  rateLimitWindowMs: number;

  // Schema drift.
  /** Fields added to every payment: name → JSON text served verbatim (e.g. `DEFAULT_EXTRA_FIELDS`). */
  paymentExtraFields: Record<string, string>;
  /** Fields added to every transfer: name → JSON text served verbatim. */
  transferExtraFields: Record<string, string>;
  /** Known fields dropped or retyped on every record or a fraction. */
  fieldChanges: FieldChange[];

  // Hostile input.
  /** Payment fields that echo the caller's API key: `api_key_id` becomes it, the others gain it. */
  echoKey: KeyEcho[];
  /**
   * Error bodies quote the request's key in their message: `whole`, or `part` (28 characters from its
   * fifth; the whole key when it has 8 or fewer).
   */
  keyInErrors: 'none' | 'whole' | 'part';
}

export interface SimOptions {
  seed?: number;
  /** Days of history to generate, ending at the simulated "now". */
  days?: number;
  /** Payments per day per organisation (transfers are a quarter of that). */
  perDay?: number;
  /** Transfers per day per organisation; default perDay / 4. */
  transfersPerDay?: number;
  /** Number of organisations (default 2). */
  organisations?: number;
  /** Malformed records mixed into the payment and transfer lists (each kind of defect in turn). */
  malformed?: number;
  /** The simulated "now" at start (default: the real now). */
  now?: Date;
  /** `manual`: simulated time moves only through `advance`; `real`: it also follows the wall clock. */
  clock?: 'manual' | 'real';
  /** Extra keys with organisation rights on the first organisation (`--api-key K`). */
  apiKeys?: string[];
  host?: string;
  /** 0 for a free port. */
  port?: number;
  /** `{payment_url}`: where `launch_url`s point (default `<url>/pay`). */
  paymentUrl?: string;
  switches?: Partial<SimSwitches>;
}

/** Keys the simulator accepts, deterministic from the seed. */
export interface SimKeys {
  /** Per organisation id: a key with organisation rights (org list, by-key list and transfers). */
  organisation: Record<string, string>;
  /** A key allowed only on the by-key list (403 on the organisation and transfer lists). */
  byKeyOnly: string;
  /** A valid key with no permission anywhere (403 on every list). */
  forbidden: string;
}

/** A payment exactly as the service would list it now. */
export interface SimPayment {
  id: string;
  reference: string;
  amount: number;
  description: string;
  status: string;
  transaction_type: string;
  phone: string | null;
  service_mobile_code: string | null;
  extra_data: Record<string, unknown>;
  createdAt: string;
  updatedAt: string;
  organization_id: string;
  api_key_id: string;
}

export interface SimTransfer {
  id: string;
  reference: string;
  amount: number;
  name: string;
  phone: string;
  service_mobile_code: string;
  status: string;
  createdAt: string;
  updatedAt: string;
}

export interface SimRequestLogEntry {
  /** Simulated time of the answer. */
  at: number;
  /**
   * Wall-clock milliseconds (fractional: `performance` precision) when the request arrived, before any
   * `slowMs` delay: what the service's own rate limiter would count.
   */
  receivedAt: number;
  /** The delay this request was given before its answer (`slowMs` and `latencyMs`; 0: none). */
  delayedMs: number;
  /** The outage on when it arrived (`none` outside one). */
  outage: Outage;
  method: string;
  path: string;
  /** The raw query string with its `?` (empty when there is none). */
  query: string;
  status: number;
}

/** One outage, from switching it on to switching it off (wall-clock ms, as `receivedAt`). */
export interface SimOutageSpan {
  kind: Exclude<Outage, 'none'>;
  from: number;
  /** `null` while it lasts. */
  to: number | null;
  /** Requests that arrived during it (0 for `refused`: they never arrive). */
  requests: number;
}

/** A record listed twice, as both listings are served (without any echoed key). */
export interface SimCopy {
  original: Record<string, unknown>;
  copy: Record<string, unknown>;
  /** With `duplicateInPlace`: the record the copy stands in place of (not listed), as it would be served. */
  displaced?: Record<string, unknown>;
}

export interface RunningSimulator {
  /** `{base_url}`, e.g. `http://127.0.0.1:41234`. */
  readonly url: string;
  readonly paymentUrl: string;
  readonly keys: SimKeys;
  /** Organisation ids, in order. */
  readonly organisations: readonly string[];
  /** The simulated now. */
  now(): Date;
  /** Moves simulated time forward: statuses progress, `updatedAt` follows, new records appear. */
  advance(ms: number): void;
  setSwitches(switches: Partial<SimSwitches>): void;
  switches(): Readonly<SimSwitches>;
  /** The truth: every valid payment of an organisation visible now (malformed ones excluded). */
  payments(organisationId: string): SimPayment[];
  /** The truth: every valid transfer of an organisation visible now. */
  transfers(organisationId: string): SimTransfer[];
  /** Every request served since start (or since `clearRequestLog`). */
  requestLog(): readonly SimRequestLogEntry[];
  clearRequestLog(): void;
  /** Every outage since start, oldest first, with the requests that arrived during it. */
  outages(): readonly SimOutageSpan[];
  /** The records of a stream that are listed twice now, with both listings. */
  copies(organisationId: string, stream: SimStream): SimCopy[];
  /** Resolves once the port follows the `outage` switch (it closes for `refused`, opens after it). */
  settled(): Promise<void>;
  /** A transfer that appears now with this `createdAt` (a late arrival when in the past); returns its id. */
  addTransfer(organisationId: string, createdAt: Date): string;
  /** A payment that appears now with this `createdAt` (a late arrival when in the past); returns its id. */
  addPayment(organisationId: string, createdAt: Date): string;
  /** Removes a transfer from the list (the service deleted it). */
  removeTransfer(organisationId: string, id: string): void;
  /** Revokes a key: from now on it gets 401. */
  revokeKey(key: string): void;
  stop(): Promise<void>;
}
