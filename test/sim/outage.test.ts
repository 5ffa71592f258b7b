/**
 * A down service: every request answered 503, every connection reset, or the port closed (refused);
 * switched on and off by a test, in-process or over the control route, with the requests that arrived
 * during each outage counted.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { requestsBetween } from '../../src/sim/request-log.js';
import { startSimulator } from '../../src/sim/server.js';
import type { RunningSimulator, SimOutageSpan } from '../../src/sim/types.js';
import { INIT, ORG, TRANSFERS, firstOrg, get } from '../helpers/sim-http.js';

let sim: RunningSimulator;
let key: string;

beforeAll(async () => {
  sim = await startSimulator({ seed: 2, now: new Date('2024-06-15T12:00:00.000Z'), days: 1, perDay: 10 });
  key = firstOrg(sim).key;
});
afterAll(() => sim.stop());

const control = (path: string, payload?: unknown) =>
  fetch(
    `${sim.url}/__sim/${path}`,
    payload === undefined ? {} : { method: 'POST', body: JSON.stringify(payload) },
  );

/** The error code under fetch's "fetch failed". */
async function failure(path: string): Promise<string> {
  const error = await get(sim, path, key).then(
    () => new Error('answered'),
    (e: unknown) => e as Error,
  );
  return String((error.cause as { code?: string } | undefined)?.code ?? error.message);
}

describe('outages', () => {
  it('unavailable: every request 503, whatever it asks, counted in its span; then back to normal', async () => {
    expect((await control('switches', { outage: 'unavailable' })).status).toBe(200);
    const statuses = [
      (await get(sim, ORG, key)).status,
      (await get(sim, TRANSFERS, key)).status,
      (await get(sim, ORG, 'not-a-key')).status,
      (await fetch(`${sim.url}${INIT}`, { method: 'POST', headers: { 'X-API-Key': key }, body: '{}' }))
        .status,
    ];
    expect(statuses).toEqual([503, 503, 503, 503]);
    expect(await (await get(sim, ORG, key)).json()).toEqual({
      statusCode: 503,
      message: 'Service Unavailable',
      error: 'Service Unavailable',
    });
    await control('switches', { outage: 'none' });
    expect((await get(sim, ORG, key)).status).toBe(200);
    const span = sim.outages().at(-1) as SimOutageSpan;
    expect(span).toMatchObject({ kind: 'unavailable', requests: 5 });
    expect(span.to).toBeGreaterThan(span.from);
    expect(requestsBetween(sim.requestLog(), span.from, span.to)).toBe(5);
    expect(
      sim
        .requestLog()
        .filter((e) => e.outage === 'unavailable')
        .every((e) => e.status === 503),
    ).toBe(true);
    const counts = (await (await control('requests')).json()) as { outages: SimOutageSpan[] };
    expect(counts.outages.at(-1)).toEqual(span);
  });

  it('reset: every connection destroyed unanswered, logged with status 0', async () => {
    sim.setSwitches({ outage: 'reset' });
    expect(await failure(ORG)).not.toBe('answered');
    expect(await failure(TRANSFERS)).not.toBe('answered');
    sim.setSwitches({ outage: 'none' });
    expect((await get(sim, ORG, key)).status).toBe(200);
    expect(sim.outages().at(-1)).toMatchObject({ kind: 'reset', requests: 2 });
    expect(
      sim
        .requestLog()
        .slice(-3)
        .map((e) => [e.status, e.outage]),
    ).toEqual([
      [0, 'reset'],
      [0, 'reset'],
      [200, 'none'],
    ]);
  });

  it('refused: the port closes (ECONNREFUSED) and opens again on the same address', async () => {
    const logged = sim.requestLog().length;
    sim.setSwitches({ outage: 'refused' });
    await sim.settled();
    expect(await failure(ORG)).toBe('ECONNREFUSED');
    expect(await failure('/__sim/state')).toBe('ECONNREFUSED');
    sim.setSwitches({ outage: 'none' });
    await sim.settled();
    expect((await get(sim, ORG, key)).status).toBe(200);
    expect(sim.requestLog().length).toBe(logged + 1);
    expect(sim.outages().at(-1)).toMatchObject({ kind: 'refused', requests: 0 });
  });

  it('refused cannot be set over the control route (it would close the route itself)', async () => {
    const res = await control('switches', { outage: 'refused' });
    expect(res.status).toBe(400);
    expect(sim.switches().outage).toBe('none');
  });
});
