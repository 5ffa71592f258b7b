/**
 * A careless or hostile service: the caller's API key echoed in the records (as `api_key_id`, inside
 * `description`, inside `extra_data`), and error bodies that quote the request's key, whole or in part.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startSimulator } from '../../src/sim/server.js';
import type { RunningSimulator } from '../../src/sim/types.js';
import { BY_KEY, INIT, ORG, TRANSFERS, firstOrg, get, pages } from '../helpers/sim-http.js';

let sim: RunningSimulator;
let key: string;
let org: string;

beforeAll(async () => {
  sim = await startSimulator({ seed: 8, now: new Date('2024-06-15T12:00:00.000Z'), days: 1, perDay: 12 });
  ({ org, key } = firstOrg(sim));
});
afterAll(() => sim.stop());

describe('the key echoed in records', () => {
  it('as api_key_id, inside description and inside extra_data; the truth and transfers unchanged', async () => {
    sim.setSwitches({ echoKey: ['api_key_id', 'description', 'extra_data'] });
    const served = (await pages(sim, ORG, key, 100)).flat();
    const truth = sim.payments(org);
    expect(served.map((p) => p.api_key_id)).toEqual(truth.map(() => key));
    expect(served.map((p) => p.description)).toEqual(truth.map((p) => `${p.description} (key ${key})`));
    expect(served.map((p) => p.extra_data)).toEqual(truth.map((p) => ({ ...p.extra_data, api_key: key })));
    expect(truth.some((p) => p.api_key_id === key)).toBe(false);
    // the by-key list still selects by the key's true id
    const mine = (await pages(sim, BY_KEY, key, 100)).flat();
    expect(mine.length).toBe(truth.filter((p) => p.api_key_id === truth[0]?.api_key_id).length);
    expect(JSON.stringify((await pages(sim, TRANSFERS, key, 100)).flat())).not.toContain(key);
    sim.setSwitches({ echoKey: [] });
  });
});

describe('the key quoted in error bodies', () => {
  const message = async (res: Response) => ((await res.json()) as { message: unknown }).message;

  it('whole: a 401 quotes the key it refused, a 503 the valid one, a 400 adds it to its messages', async () => {
    sim.setSwitches({ keyInErrors: 'whole' });
    expect(await message(await get(sim, ORG, 'Q~z'))).toBe('Invalid or missing API key (request-key=Q~z)');
    const init = await fetch(`${sim.url}${INIT}`, {
      method: 'POST',
      headers: { 'X-API-Key': key },
      body: '{}',
    });
    expect(await message(init)).toEqual([
      'amount must be a positive number',
      'description should not be empty',
      `request-key=${key}`,
    ]);
    sim.setSwitches({ outage: 'unavailable' });
    expect(await message(await get(sim, TRANSFERS, key))).toBe(`Service Unavailable (request-key=${key})`);
    sim.setSwitches({ outage: 'none' });
    expect((await get(sim, ORG, key)).status).toBe(200);
    expect(await message(await get(sim, ORG))).toBe('Invalid or missing API key'); // no key, nothing to quote
  });

  it('part: 28 characters from the fifth (a short key whole), in JSON and HTML bodies', async () => {
    sim.setSwitches({ keyInErrors: 'part', serverErrorRate: 1 });
    const fragment = key.slice(4, 32);
    expect(fragment).toHaveLength(28);
    const bodies: string[] = [];
    for (let i = 0; i < 30 && !bodies.some((b) => b.startsWith('<html>')); i++)
      bodies.push(await (await get(sim, ORG, key)).text());
    expect(bodies.every((b) => b.includes(`request-key=${fragment}`) && !b.includes(key))).toBe(true);
    expect(bodies.at(-1)).toContain(`<p>request-key=${fragment}</p>`);
    sim.setSwitches({ serverErrorRate: 0 });
    expect(await message(await get(sim, ORG, 'short-k'))).toBe(
      'Invalid or missing API key (request-key=short-k)',
    );
    sim.setSwitches({ keyInErrors: 'none' });
  });
});
