/**
 * A down service is left alone: with SYNC_EVERY=5s, a minute of 503s costs the service a handful of
 * requests (the failed attempts that open the circuit, then one probe per stream on due ticks, the gap
 * growing to four ticks), well under a healthy minute's; two workers share the circuit through Redis; the
 * first answer closes it and what was created meanwhile lands within two ticks.
 * Time is the simulator's clock, moved by the test one SYNC_EVERY per tick; requests are counted in the
 * simulator's request log, per tick.
 */
import { describe, expect, it } from '@jest/globals';
import { silentLogger } from '../../src/log.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { requestsBetween, wallNow } from '../../src/sim/request-log.js';
import type { SimOutageSpan } from '../../src/sim/types.js';
import {
  MAX_PROBE_GAP_TICKS,
  OPEN_AFTER_FAILURES,
  isOutage,
  nextProbeGap,
  readCircuit,
} from '../../src/sync/circuit.js';
import { runTick } from '../../src/sync/run-work.js';
import { CircuitOpenError } from '../../src/errors.js';
import { STREAMS, type Stream } from '../../src/upstream/schemas.js';
import { harnessFor } from '../helpers/sync-harness.js';

const EVERY_MS = 5_000;
const TICKS_PER_MINUTE = 60_000 / EVERY_MS;

describe('the probe schedule (pure)', () => {
  it('doubles from SYNC_EVERY up to four ticks', () => {
    const gaps: number[] = [];
    let gap = 0;
    for (let i = 0; i < 6; i++) gaps.push((gap = nextProbeGap(gap, EVERY_MS)));
    expect(gaps.map((g) => g / EVERY_MS)).toEqual([1, 2, 4, 4, 4, 4]);
  });

  it('counts 5xx, 408 and no answer as the service being down; any other answer as up', () => {
    expect([500, 502, 503, 504, 408, 'network' as const].every(isOutage)).toBe(true);
    expect([200, 204, 400, 401, 403, 404, 429].some(isOutage)).toBe(false);
  });
});

describe('a service down for a minute', () => {
  const harness = harnessFor({
    name: 'circuit',
    // a busy noon: a payment a minute or so (this seed makes some in the outage minute)
    sim: { days: 1, perDay: 1_440, now: new Date('2024-06-15T12:00:00.000Z') },
    env: { SYNC_EVERY: '5s', SYNC_LOOKBACK: '1h', PAGE_SIZE: '100' },
  });

  it('gets one probe per stream on due ticks, shared by two workers, and is caught up after', async () => {
    const h = harness();
    const other: Runtime = await createRuntime(h.settings, {
      log: silentLogger,
      name: 'test-circuit-other',
      backoff: { baseMs: 5, maxMs: 50, maxRetryAfterMs: 2_000 },
      now: () => h.sim.now(),
    });
    try {
      const source = h.settings.sources[0]!;
      const workers = [h.runtime.syncContext(source), other.syncContext(source)];
      const log = () => h.sim.requestLog();
      /** One tick: each stream ticked by both workers; the requests each stream sent. */
      const tick = async (): Promise<Record<Stream, number>> => {
        const sent = { payments: 0, transfers: 0 };
        for (const stream of STREAMS) {
          const before = log().length;
          for (const deps of workers) await runTick(deps, stream);
          sent[stream] = log().length - before;
        }
        h.sim.advance(EVERY_MS);
        return sent;
      };
      const minute = async () => {
        const from = wallNow();
        const ticks: Array<Record<Stream, number>> = [];
        for (let i = 0; i < TICKS_PER_MINUTE; i++) ticks.push(await tick());
        return { ticks, requests: requestsBetween(log(), from, wallNow()) };
      };

      await tick(); // the first sync reads the day
      const healthy = await minute();

      h.sim.setSwitches({ outage: 'unavailable' });
      const outageFrom = h.sim.now().getTime();
      const down = await minute();
      const during = await readCircuit(h.runtime.redis, h.prefix, source.name);
      // a worker's other requests are refused unsent while the circuit is open
      const sentBefore = log().length;
      await expect(other.client(source).listTransfers({ page: 0, size: 1 })).rejects.toBeInstanceOf(
        CircuitOpenError,
      );
      expect(log().length).toBe(sentBefore);
      h.sim.setSwitches({ outage: 'none' });
      const outageTo = h.sim.now().getTime();
      const span = h.sim.outages().at(-1) as SimOutageSpan;

      // the minute’s requests: well under a healthy minute's, and exactly what the design allows
      expect(span.requests).toBe(down.requests);
      expect(down.requests).toBeLessThan(healthy.requests / 3);
      const opening = down.ticks[0]!;
      expect(opening.payments).toBe(OPEN_AFTER_FAILURES);
      expect(opening.transfers).toBe(1); // the circuit opened before the transfers tick: its first probe
      for (const stream of STREAMS) {
        const sent = down.ticks.map((t) => t[stream]);
        const probed = sent.flatMap((n, i) => (n > 0 && !(stream === 'payments' && i === 0) ? [i] : []));
        expect(sent.filter((_, i) => probed.includes(i)).every((n) => n === 1)).toBe(true);
        const gaps = probed.slice(1).map((t, i) => t - probed[i]!);
        expect(gaps).toEqual(gaps.map((_, i) => Math.min(2 ** i, MAX_PROBE_GAP_TICKS)));
        expect(gaps.length).toBeGreaterThanOrEqual(3); // the gap reached its ceiling within the minute
      }
      expect(during).toMatchObject({ open: true, lastCode: 'SERVICE_UNAVAILABLE' });
      expect(during.lastError).toMatch(/503/);
      expect(during.nextProbe).not.toBeNull();

      // back: the next due probe closes the circuit, and within two ticks of it what was made meanwhile lands
      let ticksToClose = 0;
      while ((await readCircuit(h.runtime.redis, h.prefix, source.name)).open) {
        expect(++ticksToClose).toBeLessThanOrEqual(MAX_PROBE_GAP_TICKS);
        await tick();
      }
      await tick();
      const made = h.sim
        .payments(h.org)
        .filter((p) => Date.parse(p.createdAt) >= outageFrom && Date.parse(p.createdAt) < outageTo)
        .map((p) => p.id);
      expect(made.length).toBeGreaterThan(0);
      const { rows } = await h.runtime.pool.query(`SELECT id FROM reporting.payments WHERE id = ANY($1)`, [
        made,
      ]);
      expect(rows.length).toBe(made.length);
      const after = [await tick(), await tick()];
      expect(after.every((t) => t.payments > 0 && t.transfers > 0)).toBe(true); // syncing again
    } finally {
      await other.close();
    }
  });
});
