/**
 * What happens to an API request before its endpoint answers: the one place where the request switches
 * apply. In order: an outage, the service's own rate limit, the seeded faults (faults.ts), then the delay
 * (`slowRate`'s `slowMs`, plus `latencyMs` on list requests the service answers).
 */
import { FaultDice, faultResponse } from './faults.js';
import type { Endpoint, Reply } from './routes.js';
import type { Outage, SimSwitches } from './types.js';

export type Verdict =
  { kind: 'reset' } | { kind: 'reply'; reply: Reply } | { kind: 'answer'; notJson: boolean };

export interface RequestPlan {
  verdict: Verdict;
  /** Delay before the verdict is carried out. */
  delayMs: number;
  /** The outage on when the request arrived. */
  outage: Outage;
}

/** Arrival times within the trailing window: what a sliding-log rate limiter keeps. */
class Arrivals {
  private times: number[] = [];

  /** Adds an arrival; returns how many arrived in the `windowMs` up to it (itself included). */
  add(at: number, windowMs: number): number {
    this.times.push(at);
    let old = 0;
    while (old < this.times.length && (this.times[old] as number) <= at - windowMs) old++;
    if (old > 0) this.times = this.times.slice(old);
    return this.times.length;
  }
}

export class RequestGate {
  private readonly dice: FaultDice;
  private readonly arrivals = new Arrivals();

  constructor(seed: number) {
    this.dice = new FaultDice(seed);
  }

  plan(s: SimSwitches, endpoint: Endpoint, receivedAt: number): RequestPlan {
    // Every request rolls and counts, whatever it meets: the fault sequence depends only on the seed and
    // the request count, and refused requests count against the rate limit as they would at a service.
    const roll = this.dice.roll(s);
    const recent = this.arrivals.add(receivedAt, s.rateLimitWindowMs);
    const outage = s.outage;
    if (outage === 'unavailable') {
      const reply = faultResponse({ kind: 'server-error', status: 503 }, s.retryAfterSeconds);
      return { verdict: { kind: 'reply', reply }, delayMs: 0, outage };
    }
    // A request that slipped in while the port was closing for `refused` is dropped like a reset.
    if (outage !== 'none') return { verdict: { kind: 'reset' }, delayMs: 0, outage };
    if (s.rateLimitRps !== null && recent > (s.rateLimitRps * s.rateLimitWindowMs) / 1000) {
      const reply = faultResponse({ kind: 'rate-limit' }, s.retryAfterSeconds);
      return { verdict: { kind: 'reply', reply }, delayMs: 0, outage };
    }
    const { fault, delayMs, notJson } = roll;
    if (fault.kind === 'reset') return { verdict: { kind: 'reset' }, delayMs, outage };
    if (fault.kind !== 'none') {
      return {
        verdict: { kind: 'reply', reply: faultResponse(fault, s.retryAfterSeconds) },
        delayMs,
        outage,
      };
    }
    const latency = endpoint === 'initialize' ? 0 : s.latencyMs;
    return { verdict: { kind: 'answer', notJson }, delayMs: delayMs + latency, outage };
  }
}
