/**
 * What every request to one source goes through before it is sent, in this order: a permit of the
 * in-flight limit (in-flight.ts: as many requests as the rate ceiling needs at the service's latency,
 * fewer when it pushes back), then a slot of the shared rate ceiling (rate-gate.ts). The permit comes
 * first so that a granted slot is used at once: a slot granted and then held while waiting for a permit
 * would send its request late, and requests sent late bunch up at the service. An answer carrying
 * `Retry-After` also holds the source's rate gate for that long, for every process.
 */
import type { AttemptReport } from '../upstream/request.js';
import { InFlightLimit, InFlightWindow } from './in-flight.js';
import type { RateGate } from './rate-gate.js';

export interface RequestPacer {
  /** The upstream client's `beforeRequest`: resolves with the function its attempt reports to. */
  beforeRequest(): Promise<(report: AttemptReport | null) => void>;
  /** The in-flight permits and their limit (for progress, metrics and tests). */
  readonly window: InFlightWindow;
}

export interface PacerOptions {
  rps: number;
  /** The in-flight limit before any answer is measured. */
  initial?: number;
  /** The most requests in flight to the source from this process. */
  max?: number;
}

/** Requests in flight to a source before any answer was measured (doubling per answer time from there). */
export const INITIAL_IN_FLIGHT = 4;

/** Requests a process may keep in flight to one source, whatever the latency. */
export const MAX_IN_FLIGHT = 64;

/**
 * `onHoldError`: a failed `hold` (Redis unreachable) is reported there and otherwise ignored: the
 * request that met the 429 waits out its Retry-After itself (retry-delay.ts) whatever happens to the hold.
 */
export function createRequestPacer(
  gate: RateGate,
  options: PacerOptions,
  onHoldError: (error: unknown) => void = () => undefined,
): RequestPacer {
  const limit = new InFlightLimit({
    rps: options.rps,
    initial: options.initial ?? INITIAL_IN_FLIGHT,
    max: options.max ?? MAX_IN_FLIGHT,
  });
  const window = new InFlightWindow(limit);
  return {
    window,
    async beforeRequest() {
      const release = await window.acquire();
      try {
        await gate.acquire(limit.smoothedMs);
      } catch (error) {
        release(null);
        throw error;
      }
      return (report) => {
        release(report);
        // the service asked every client to wait: so do this source's other requests, in every process
        if (report?.retryAfterMs !== undefined) gate.hold(report.retryAfterMs).catch(onHoldError);
      };
    },
  };
}

/** The most jobs a worker process runs at once, whatever the in-flight limits ask (WORKER_CONCURRENCY's bound). */
export const MAX_JOBS = 64;

/**
 * How many jobs a worker should run at once so that its sources' in-flight limits can fill: a job reads
 * one page at a time and spends some of its time writing and deciding between requests, so each
 * permit needs a quarter of a job more, and one job more keeps a permit from waiting on a job's start.
 * Never under the configured concurrency (`WORKER_CONCURRENCY`), never over MAX_JOBS.
 */
export function jobsToFill(pacers: Iterable<RequestPacer>, configured: number): number {
  let permits = 0;
  for (const pacer of pacers) permits += pacer.window.control.limit;
  const wanted = permits === 0 ? 0 : Math.ceil(permits * 1.25) + 1;
  return Math.max(configured, Math.min(MAX_JOBS, wanted));
}

/** The most pages of one window asked for at once: each arrived page waits in memory for its turn. */
export const MAX_PAGES_AHEAD = 16;

/**
 * Pages of one window to ask for at once: as many as the source's in-flight limit lets out (more would
 * only wait at the permits), at most MAX_PAGES_AHEAD.
 */
export function pagesAhead(pacer: RequestPacer): number {
  return Math.min(MAX_PAGES_AHEAD, pacer.window.control.limit);
}
