/**
 * The two ends of a worker's life that outlast a single call: a start that waits for Redis, PostgreSQL
 * and the migrations (a worker started during an outage, or before the migrate job of a release ran,
 * waits and says for what instead of exiting), and a drain bounded by DRAIN_TIMEOUT (so a cluster's
 * termination grace can be set above it). SIGTERM or SIGINT ends either.
 */
import { ServiceUnreachableError } from '../errors.js';
import type { Logger } from '../log.js';

/** SIGTERM/SIGINT, listened for from the first moment so that a stop during the start is honoured. */
export class StopSignal {
  private received: string | null = null;
  private readonly wakers = new Set<() => void>();
  readonly promise: Promise<string>;

  constructor() {
    this.promise = new Promise<string>((resolve) => {
      const on = (name: string) => () => {
        this.received ??= name;
        for (const wake of this.wakers) wake();
        resolve(name);
      };
      process.once('SIGTERM', on('SIGTERM'));
      process.once('SIGINT', on('SIGINT'));
    });
  }

  get stopped(): boolean {
    return this.received !== null;
  }

  /** Waits `ms`, or less when a stop arrives meanwhile. */
  sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakers.add(done);
      if (this.received) done();
    });
  }
}

export interface WaitOptions {
  stop: StopSignal;
  log: Logger;
  /** Told each time what the start waits for (the readiness probe shows it). */
  onWaiting: (what: string) => void;
  /** Retry delays grow from firstMs to maxMs (defaults 500 ms and 5 s). */
  firstMs?: number;
  maxMs?: number;
}

/** The reason without the local start-up hint of runtime.ts (a cluster's operator starts nothing by hand). */
function reasonOf(error: ServiceUnreachableError): string {
  return error.message.replace(/\. Start it with .*$/s, '');
}

/**
 * Runs `attempt` until it succeeds, retrying while it throws ServiceUnreachableError (Redis, PostgreSQL,
 * a missing database or migration); anything else is thrown. Each new reason is logged once (warn), and
 * again every 30 attempts while it lasts. Resolves null when a stop arrives first.
 */
export async function untilReachable<T>(attempt: () => Promise<T>, o: WaitOptions): Promise<T | null> {
  let delay = o.firstMs ?? 500;
  let last = '';
  for (let n = 0; !o.stop.stopped; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof ServiceUnreachableError)) throw error;
      const reason = reasonOf(error);
      o.onWaiting(reason);
      if (reason !== last || n % 30 === 0) o.log.warn({ reason }, 'worker waiting before it takes jobs');
      last = reason;
    }
    await o.stop.sleep(delay);
    delay = Math.min(delay * 2, o.maxMs ?? 5_000);
  }
  return null;
}

/** Resolves true when `work` ends within `ms`, false when the bound comes first (work keeps running). */
export async function withinBound(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([work.then(() => true as const), bound]);
  } finally {
    clearTimeout(timer);
  }
}
