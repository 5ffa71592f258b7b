/**
 * How many requests to one source a process keeps in flight: enough to fill the rate ceiling at the
 * service's latency (Little's law: in flight = rate × latency), fewer when the service pushes back.
 *
 * `InFlightLimit` is the decision, pure (the clock is passed in), AIMD in the manner of TCP:
 * - the target is the rate ceiling times the service's quickest recent answer, with a quarter more and
 *   one more request so that a late answer does not leave a slot of the ceiling unused;
 * - it grows towards the target by one request per answer until the service first pushes back, then by
 *   one request per `limit` answers (additive increase), and only while the limit is in use and the
 *   answers are not slowing down (answers slower than twice the quickest recent one mean requests queue
 *   at the service, or in this process: more in flight would only lengthen the queue, so the limit then
 *   comes down by one per round of answers, to two);
 * - a 429, or any answer carrying `Retry-After`, halves it (at most once per answer time) and holds it
 *   there until the wait the service asked for has passed (multiplicative decrease);
 * - it never goes under one request, nor over `max`.
 * `InFlightWindow` holds the permits: a request waits for one before it asks the rate gate for a slot,
 * and gives it back when its answer (or failure) arrives.
 */

import type { AttemptReport } from '../upstream/request.js';
import { Permits } from './permits.js';

export type { AttemptReport };

export interface InFlightOptions {
  /** The source's rate ceiling, requests per second (`UPSTREAM_RPS`). */
  rps: number;
  /** The limit before any answer was measured. */
  initial: number;
  /** The most requests ever in flight to the source from this process. */
  max: number;
}

/** Answers whose quickest sets the latency the target is sized from. */
const LATENCY_SAMPLES = 50;
/** An answer this much slower than the quickest recent one says requests are queueing. */
const QUEUEING_FACTOR = 2;
const QUEUEING_ALLOWANCE_MS = 5;
/** Queueing alone never takes the limit under this (a 429 may: that is the service asking). */
const QUEUEING_FLOOR = 2;

export class InFlightLimit {
  private value: number;
  private readonly samples: number[] = [];
  private quickest = Infinity;
  private smoothed = NaN;
  private holdUntil = -Infinity;
  private lastDecrease = -Infinity;
  private pushedBack = false;
  private decreases = 0;

  constructor(private readonly options: InFlightOptions) {
    this.value = Math.max(1, Math.min(options.max, options.initial));
  }

  /** Requests allowed in flight now (a whole number >= 1). */
  get limit(): number {
    return Math.max(1, Math.floor(this.value));
  }

  /** The service's quickest recent answer (ms), NaN before the first. */
  get latencyMs(): number {
    return Number.isFinite(this.quickest) ? this.quickest : NaN;
  }

  /** Smoothed answer time (ms), NaN before the first. */
  get smoothedMs(): number {
    return this.smoothed;
  }

  /** How many times the service's push-back halved the limit. */
  get shrinks(): number {
    return this.decreases;
  }

  /** The limit the latency calls for: rate × latency, a quarter more, plus one. */
  target(): number {
    if (!Number.isFinite(this.quickest)) return this.limit;
    const needed = Math.ceil((this.options.rps * this.quickest * 1.25) / 1000) + 1;
    return Math.max(1, Math.min(this.options.max, needed));
  }

  /** Feeds one attempt's outcome; `inFlight`: the requests in flight when it ended, itself included. */
  observe(report: AttemptReport, inFlight: number, nowMs: number): void {
    const pushBack = report.status === 429 || report.retryAfterMs !== undefined;
    if (pushBack) {
      this.shrink(report, nowMs);
      return;
    }
    if (report.status === 'network') return; // a timeout or reset says nothing about latency
    this.measure(report.ms);
    if (nowMs < this.holdUntil) return;
    const target = this.target();
    if (this.value > target + 1) {
      this.value = Math.max(target, this.value - 1 / this.value); // the service got quicker
      return;
    }
    const full = inFlight >= this.limit;
    const queueing = this.smoothed > QUEUEING_FACTOR * this.quickest + QUEUEING_ALLOWANCE_MS;
    if (queueing) {
      // requests wait at the service (or in this process): fewer in flight, one per round, down to two
      if (this.value > QUEUEING_FLOOR) this.value = Math.max(QUEUEING_FLOOR, this.value - 1 / this.value);
      return;
    }
    if (this.value >= target || !full) return;
    this.value = Math.min(target, this.value + (this.pushedBack ? 1 / this.value : 1));
  }

  private shrink(report: AttemptReport, nowMs: number): void {
    this.pushedBack = true;
    const answerMs = Number.isFinite(this.smoothed) ? this.smoothed : report.ms;
    this.holdUntil = Math.max(this.holdUntil, nowMs + Math.max(report.retryAfterMs ?? 0, answerMs));
    // one halving per answer time: the answers of one burst all report the same push-back
    if (nowMs - this.lastDecrease < answerMs) return;
    this.lastDecrease = nowMs;
    this.decreases += 1;
    this.value = Math.max(1, this.value / 2);
  }

  private measure(ms: number): void {
    this.samples.push(ms);
    if (this.samples.length > LATENCY_SAMPLES) this.samples.shift();
    this.quickest = Math.min(...this.samples);
    this.smoothed = Number.isNaN(this.smoothed) ? ms : 0.8 * this.smoothed + 0.2 * ms;
  }
}

/** Permits of an InFlightLimit: as many requests in flight as the limit allows at each moment. */
export class InFlightWindow {
  private readonly permits: Permits;

  constructor(
    readonly control: InFlightLimit,
    private readonly clock: () => number = () => performance.now(),
  ) {
    this.permits = new Permits(() => control.limit);
  }

  /** Requests in flight now. */
  get inFlight(): number {
    return this.permits.held;
  }

  /** The most requests in flight, counted when a request was let out, since the last `resetPeak`. */
  get peak(): number {
    return this.permits.peak;
  }

  resetPeak(): void {
    this.permits.resetPeak();
  }

  /** Resolves when a request may go out; call the returned function with its outcome exactly once. */
  async acquire(): Promise<(report: AttemptReport | null) => void> {
    const release = await this.permits.take();
    let reported = false;
    return (report) => {
      if (reported) return;
      reported = true;
      if (report) this.control.observe(report, this.permits.held, this.clock());
      release(); // after observing: a limit that grew lets the next waiters in at once
    };
  }
}
