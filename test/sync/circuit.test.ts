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
  isOutageError,
  isOutageStatus,
  nextProbeGap,
  outageProblem,
  readCircuit,
} from '../../src/sync/circuit.js';
import { runTick } from '../../src/sync/run-work.js';
import { CircuitOpenError, UpstreamAuthError, UpstreamServerError } from '../../src/errors.js';
import { blocksDay, isOutage, reasonOfError } from '../../src/sync/window-reasons.js';
import { STREAMS, type Stream } from '../../src/upstream/schemas.js';
import { harnessEnv, runCli } from '../helpers/cli-run.js';
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

  it('names the upstream problem as people say it', () => {
    const named = (lastCode: 'SERVICE_UNAVAILABLE' | 'CONNECTION_FAILED', lastError: string) =>
      outageProblem({ lastCode, lastError });
    expect(named('SERVICE_UNAVAILABLE', 'the service answered 503 (source default, /api/transferts)')).toBe(
      'it answers 503 Service Unavailable',
    );
    expect(named('SERVICE_UNAVAILABLE', 'the service answered 502 (source default, /api/transferts)')).toBe(
      'it answers 502',
    );
    const network = 'could not reach the service: ';
    expect(named('CONNECTION_FAILED', `${network}ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9`)).toBe(
      'connection refused',
    );
    expect(named('CONNECTION_FAILED', `${network}ECONNRESET: socket hang up`)).toBe('connection reset');
    expect(named('CONNECTION_FAILED', `${network}no answer within 300 ms (timeout)`)).toBe(
      'no answer in time (timeout)',
    );
  });

  it('counts 5xx, 408 and no answer as the service being down; any other answer as up', () => {
    expect([500, 502, 503, 504, 408, 'network' as const].every(isOutageStatus)).toBe(true);
    expect([200, 204, 400, 401, 403, 404, 429].some(isOutageStatus)).toBe(false);
  });

  it('a request the open circuit refused ends its window with CIRCUIT_OPEN: an outage, not the day’s fault', () => {
    const refused = new CircuitOpenError({ source: 'default', endpoint: '/api/transferts' }, 'circuit open');
    expect(reasonOfError(refused)).toBe('CIRCUIT_OPEN');
    expect(blocksDay(reasonOfError(refused))).toBe(false);
    expect(isOutageError(refused)).toBe(true);
    expect(isOutageError(new UpstreamServerError({ endpoint: '/api/transferts' }, 503))).toBe(true);
    expect(isOutageError(new UpstreamAuthError({ endpoint: '/api/transferts' }, 'no'))).toBe(false);
  });
});

describe('a service down for a minute', () => {
  const harness = harnessFor({
    name: 'circuit',
    // a payment a minute or so; the seed places records at the same offsets from the simulator's start
    // whatever the date, so some are made in the outage minute. Started at the wall clock's now, as
    // `paysync status` (a CLI process) measures the lag against it.
    sim: { days: 1, perDay: 1_440, now: new Date() },
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
      const statusDown = await runCli(['status'], harnessEnv(h));
      // a worker's other requests are refused unsent while the circuit is open
      const sentBefore = log().length;
      await expect(other.client(source).listTransfers({ page: 0, size: 1 })).rejects.toBeInstanceOf(
        CircuitOpenError,
      );
      expect(log().length).toBe(sentBefore);
      // the windows the outage ended have their rows, with outage reasons: none counts towards a blocked day
      const { rows: failed } = await h.runtime.pool.query(
        `SELECT DISTINCT reason_code, failures FROM reporting.sync_windows WHERE outcome <> 'complete'`,
      );
      expect(failed.length).toBeGreaterThan(0);
      for (const row of failed)
        expect({ ...row, outage: isOutage(row.reason_code) }).toMatchObject({ outage: true, failures: 0 });
      h.sim.setSwitches({ outage: 'none' });
      const outageTo = h.sim.now().getTime();
      const span = h.sim.outages().at(-1) as SimOutageSpan;

      // the minute’s requests: well under a healthy minute's, and exactly what the design allows
      expect(span.requests).toBe(down.requests);
      expect(down.requests).toBeLessThan(healthy.requests / 3);
      const opening = down.ticks[0]!;
      expect(opening.payments).toBe(OPEN_AFTER_FAILURES);
      expect(opening.transfers).toBe(0); // the tick that opened the circuit sends nothing more
      for (const stream of STREAMS) {
        const sent = down.ticks.map((t) => t[stream]);
        const probed = sent.flatMap((n, i) => (n > 0 && i > 0 ? [i] : []));
        expect(probed[0]).toBe(1); // the first probe: one SYNC_EVERY after the opening
        expect(sent.filter((_, i) => probed.includes(i)).every((n) => n === 1)).toBe(true);
        const gaps = probed.slice(1).map((t, i) => t - probed[i]!);
        expect(gaps).toEqual(gaps.map((_, i) => Math.min(2 ** i, MAX_PROBE_GAP_TICKS)));
        expect(gaps.length).toBeGreaterThanOrEqual(3); // the gap reached its ceiling within the minute
      }
      expect(during).toMatchObject({ open: true, lastCode: 'SERVICE_UNAVAILABLE' });
      expect(during.lastError).toMatch(/503/);
      expect(during.nextProbe).not.toBeNull();
      expect(statusDown.status).toBe(1);
      expect(statusDown.stdout).toMatch(
        /needs attention:\n {2}default: the service is down, it answers 503 Service Unavailable; circuit open since /,
      );

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
      const statusBack = await runCli(['status'], harnessEnv(h));
      expect({ code: statusBack.status, out: statusBack.stdout }).toEqual({
        code: 0,
        out: expect.stringMatching(/\nhealthy\n$/),
      });
    } finally {
      await other.close();
    }
  });
});
