/**
 * The simulator's request log and its outages, and the counts tests and benches take from a log: the
 * busiest sliding window (is a rate ceiling kept?) and the requests in a span (how hard was a down
 * service hit?). Times are wall-clock milliseconds with `performance` precision (`receivedAt`).
 */
import type { Outage, SimOutageSpan, SimRequestLogEntry } from './types.js';

/** Oldest entries are dropped past this, so a long-running simulator does not grow without bound. */
const REQUEST_LOG_LIMIT = 100_000;

export class RequestLog {
  private log: SimRequestLogEntry[] = [];
  private readonly spans: SimOutageSpan[] = [];

  record(entry: SimRequestLogEntry): void {
    if (this.log.length >= REQUEST_LOG_LIMIT) this.log = this.log.slice(REQUEST_LOG_LIMIT / 10);
    this.log.push(entry);
    const open = this.spans.at(-1);
    if (entry.outage !== 'none' && open && open.to === null && open.kind === entry.outage) open.requests++;
  }

  entries(): readonly SimRequestLogEntry[] {
    return this.log;
  }

  /** Clears the entries; outages are kept (they count their own requests). */
  clear(): void {
    this.log = [];
  }

  /** The `outage` switch changed at wall-clock `at`: the open span ends, a new one starts unless `none`. */
  outageSwitched(kind: Outage, at: number): void {
    const open = this.spans.at(-1);
    if (open && open.to === null) {
      if (open.kind === kind) return;
      open.to = at;
    }
    if (kind !== 'none') this.spans.push({ kind, from: at, to: null, requests: 0 });
  }

  outages(): readonly SimOutageSpan[] {
    return this.spans;
  }
}

/** Wall-clock now in the log's terms. */
export const wallNow = (): number => performance.timeOrigin + performance.now();

/**
 * The most requests whose `receivedAt` falls in any window `[t, t + ms)`: with ms = 1000, the busiest
 * second a service-side rate limiter would have seen.
 */
export function maxRequestsInWindow(log: readonly { receivedAt: number }[], ms: number): number {
  const times = log.map((e) => e.receivedAt).sort((a, b) => a - b);
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < times.length; hi++) {
    while ((times[hi] as number) - (times[lo] as number) >= ms) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}

/** Requests that arrived in `[from, to)` (`to` null: until now). */
export function requestsBetween(
  log: readonly { receivedAt: number }[],
  from: number,
  to: number | null,
): number {
  return log.filter((e) => e.receivedAt >= from && (to === null || e.receivedAt < to)).length;
}
