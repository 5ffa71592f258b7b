/**
 * Upstream ceiling and backoff drills: the simulator answers 429 with `Retry-After: 1`, 5xx, replies too
 * slow for the client's timeout, or drops connections. Two runtimes tick at once (payments on one,
 * transfers on the other) so the shared ceiling is contended. Every window completes within a few
 * ticks and the warehouse equals the simulator; and, measured at the simulator from its request log:
 * - no sliding second holds more than the ceiling's contract, UPSTREAM_RPS × 1.05 + 1 requests;
 * - no request is repeated without a pause: after a 429 it waits out `Retry-After`, after a timeout it
 *   waited the timeout, and after a 5xx or a reset at least the ceiling's spacing 1/UPSTREAM_RPS. (The
 *   client's backoff is "full jitter", uniform in [0, base·2^n): its own floor is 0 by design, so the
 *   firm lower bound on any repeat is the ceiling's spacing; the test also reports the mean gap.)
 */
import { describe, expect, it } from '@jest/globals';
import { cleanupsAfterEach } from '../helpers/cleanups.js';
import { silentLogger } from '../../src/log.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { maxRequestsInWindow } from '../../src/sim/request-log.js';
import type { SimRequestLogEntry, SimSwitches } from '../../src/sim/types.js';
import { ceilingContract } from '../../src/sync/rate-gate.js';
import { tickPayments, tickTransfers } from '../../src/sync/tick.js';
import {
  paymentDifferences,
  startHarness,
  transferDifferences,
  type Harness,
} from '../helpers/sync-harness.js';

const RPS = 20;
const TIMEOUT_MS = 300;
const BACKOFF = { baseMs: 50, maxMs: 800, maxRetryAfterMs: 2_000 };
/**
 * The gate spaces its grants in Redis time on a timeline 1/RPS apart (rate-gate.ts); a request arrives at
 * the service a variable moment after its grant (event loop, connection), so on a loaded machine two
 * arrivals can sit closer than their grants did. The ceiling's contract (ceilingContract) allows for that;
 * a repeat counts as spaced when it came at least half the gate's spacing later: an immediate retry would
 * arrive within a millisecond or two.
 */
const SPACING_MS = 1000 / RPS;
const ARRIVAL_JITTER_MS = SPACING_MS / 2;

let h: Harness | null = null;
const cleanups = cleanupsAfterEach(async () => {
  await h?.close();
  h = null;
});

interface Repeat {
  after: SimRequestLogEntry;
  gapMs: number;
}

/** Each request followed by the next request of the same method, path and query. */
function repeats(log: readonly SimRequestLogEntry[]): Repeat[] {
  const last = new Map<string, SimRequestLogEntry>();
  const out: Repeat[] = [];
  for (const entry of [...log].sort((a, b) => a.receivedAt - b.receivedAt)) {
    const key = `${entry.method} ${entry.path}${entry.query}`;
    const previous = last.get(key);
    if (previous) out.push({ after: previous, gapMs: entry.receivedAt - previous.receivedAt });
    last.set(key, entry);
  }
  return out;
}

const failed = (e: SimRequestLogEntry) => e.status === 0 || e.status === 429 || e.status >= 500;

async function drill(name: string, switches: Partial<SimSwitches>, pageSize = 5) {
  h = await startHarness({
    name,
    // small pages: enough requests that the two ticks together want more than the ceiling allows
    sim: { days: 2, perDay: 60, switches },
    env: {
      PAGE_SIZE: String(pageSize),
      UPSTREAM_RPS: String(RPS),
      UPSTREAM_TIMEOUT: `${TIMEOUT_MS}ms`,
      UPSTREAM_RETRIES: '8',
      SYNC_LOOKBACK: '1h',
    },
  });
  const harness = h;
  const runtimes: Runtime[] = [];
  for (const label of ['payments', 'transfers']) {
    const rt = await createRuntime(harness.settings, {
      log: silentLogger,
      name: `drill-${label}`,
      backoff: BACKOFF,
      now: () => harness.sim.now(),
    });
    cleanups.push(() => rt.close());
    runtimes.push(rt);
  }
  const source = harness.settings.sources[0]!;
  let ticks = 0;
  // a window whose retries run out is read again by the next tick
  for (; ticks < 5;) {
    ticks++;
    const [payments, transfers] = await Promise.all([
      tickPayments(runtimes[0]!.syncContext(source)),
      tickTransfers(runtimes[1]!.syncContext(source)),
    ]);
    const windows = [...payments.windows, ...payments.revisits];
    if (windows.every((w) => w.outcome === 'complete') && transfers?.outcome === 'complete') break;
  }
  expect(ticks).toBeLessThan(5);
  expect(await paymentDifferences(harness)).toEqual([]);
  expect(await transferDifferences(harness)).toEqual([]);

  const log = harness.sim.requestLog();
  const busiest = maxRequestsInWindow(log, 1000);
  const pairs = repeats(log);
  const afterFailure = pairs.filter((r) => failed(r.after));
  const gaps = afterFailure.map((r) => r.gapMs);
  const report = {
    requests: log.length,
    failures: log.filter(failed).length,
    busiest,
    minGapAfterFailure: Math.round(Math.min(...gaps)),
    meanGapAfterFailure: Math.round(gaps.reduce((a, b) => a + b, 0) / Math.max(1, gaps.length)),
    minGapAfterTimeout: Math.round(
      Math.min(...pairs.filter((r) => r.after.delayedMs > TIMEOUT_MS).map((r) => r.gapMs)),
    ),
  };
  process.stderr.write(`drill ${name}: ${JSON.stringify(report)}\n`);
  expect(busiest).toBeLessThanOrEqual(ceilingContract(RPS).most);
  for (const r of afterFailure) expect(r.gapMs).toBeGreaterThanOrEqual(SPACING_MS - ARRIVAL_JITTER_MS);
  return { log, pairs, afterFailure };
}

describe('a flaky upstream: every window completes, the ceiling holds, retries back off', () => {
  it('30% 429 with Retry-After: 1 — the request waits at least a second before it is repeated', async () => {
    const { log, afterFailure } = await drill('up429', { rateLimitRate: 0.3, retryAfterSeconds: 1 }, 10);
    const limited = afterFailure.filter((r) => r.after.status === 429);
    expect(log.filter((e) => e.status === 429).length).toBeGreaterThan(3);
    expect(limited.length).toBeGreaterThan(3);
    // the client sleeps Retry-After after the answer arrived, so the next arrival is at least 1 s later
    for (const r of limited) expect(r.gapMs).toBeGreaterThanOrEqual(1000);
  });

  it('30% 5xx — repeats are spaced, never immediate', async () => {
    const { afterFailure } = await drill('up5xx', { serverErrorRate: 0.3 });
    expect(afterFailure.filter((r) => r.after.status >= 500).length).toBeGreaterThan(3);
  });

  it('20% of replies slower than the timeout — the client gives up and retries after the timeout', async () => {
    const { pairs } = await drill('upslow', { slowRate: 0.2, slowMs: 2 * TIMEOUT_MS });
    const timedOut = pairs.filter((r) => r.after.delayedMs > TIMEOUT_MS);
    expect(timedOut.length).toBeGreaterThan(3);
    // the timeout runs from when the client sent, a moment before the request arrived
    for (const r of timedOut) expect(r.gapMs).toBeGreaterThanOrEqual(TIMEOUT_MS - ARRIVAL_JITTER_MS);
  });

  it('30% connection resets — retried with pauses until complete', async () => {
    const { afterFailure } = await drill('upreset', { resetRate: 0.3 });
    expect(afterFailure.filter((r) => r.after.status === 0).length).toBeGreaterThan(3);
  });

  it('all at once: 15% 429, 15% 5xx, 10% slow, 10% resets', async () => {
    const { log } = await drill(
      'upmixed',
      {
        rateLimitRate: 0.15,
        retryAfterSeconds: 1,
        serverErrorRate: 0.15,
        slowRate: 0.1,
        slowMs: 2 * TIMEOUT_MS,
        resetRate: 0.1,
      },
      10,
    );
    expect(log.some((e) => e.status === 429)).toBe(true);
  });
});
