/**
 * The simulator's public contract (src/sim/). Tests, the demo and the benchmarks start it in-process with
 * `startSimulator(options)` (src/sim/server.ts), or as `paysync sim` in its own process and steer it over
 * its control routes (`/__sim/...`, see server.ts).
 */

/** Which list shape the list endpoints answer with (an open point of the interface). */
export type ListShape = 'array' | 'wrapper' | 'alternate';
/** Order of listed items (an open point). `unordered` is a stable, seeded shuffle. */
export type Ordering = 'asc' | 'desc' | 'unordered';

/** Switches for every open point of the interface and for faults. All can change while running. */
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
  /** The `slowMs` delay this request was given (0: none). */
  delayedMs: number;
  method: string;
  path: string;
  /** The raw query string with its `?` (empty when there is none). */
  query: string;
  status: number;
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
  /** A transfer that appears now with this `createdAt` (a late arrival when in the past); returns its id. */
  addTransfer(organisationId: string, createdAt: Date): string;
  /** Removes a transfer from the list (the service deleted it). */
  removeTransfer(organisationId: string, id: string): void;
  /** Revokes a key: from now on it gets 401. */
  revokeKey(key: string): void;
  stop(): Promise<void>;
}
