/**
 * Control routes for a simulator running in another process (`paysync sim`), all under `/__sim/` and
 * without an API key: they are a test harness, never part of the upstream interface.
 *   GET  /__sim/state      now, switches, organisations, keys, record counts
 *   POST /__sim/advance    {"ms": N}            moves simulated time forward
 *   POST /__sim/switches   {partial switches}   validated; unknown names are refused
 *   POST /__sim/revoke     {"key": K}           the key gets 401 from now on
 *   GET  /__sim/requests   request counts by endpoint and status
 *   GET  /__sim/truth?org=ID&stream=payments|transfers   the truth as JSON
 */
import { type Reply, json } from './routes.js';
import type { Simulator } from './sim.js';
import { switchProblems } from './switches.js';
import type { SimSwitches } from './types.js';

function parseBody(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

const problem = (status: number, message: string): Reply => json(status, { statusCode: status, message });

function state(sim: Simulator, url: string, paymentUrl: string): Reply {
  const now = sim.now();
  const counts = Object.fromEntries(
    sim.directory.organisations.map((org) => [
      org,
      { payments: sim.count('payments', org), transfers: sim.count('transfers', org) },
    ]),
  );
  return json(200, {
    url,
    paymentUrl,
    now: new Date(now).toISOString(),
    switches: sim.switches(),
    organisations: sim.directory.organisations,
    keys: sim.directory.keys,
    counts,
  });
}

function requestCounts(sim: Simulator): Reply {
  const byEndpoint: Record<string, number> = {};
  const byStatus: Record<string, number> = {};
  for (const entry of sim.requestLog()) {
    const endpoint = `${entry.method} ${entry.path}`;
    byEndpoint[endpoint] = (byEndpoint[endpoint] ?? 0) + 1;
    byStatus[entry.status] = (byStatus[entry.status] ?? 0) + 1;
  }
  return json(200, { total: sim.requestLog().length, byEndpoint, byStatus });
}

function truth(sim: Simulator, params: URLSearchParams): Reply {
  const org = params.get('org') ?? '';
  const stream = params.get('stream') ?? 'payments';
  if (!sim.directory.organisations.includes(org)) return problem(404, `unknown organisation "${org}"`);
  if (stream === 'payments') return json(200, sim.payments(org));
  if (stream === 'transfers') return json(200, sim.transfers(org));
  return problem(400, 'stream must be payments or transfers');
}

function post(sim: Simulator, path: string, body: Record<string, unknown>): Reply {
  if (path === '/__sim/advance') {
    const ms = body.ms;
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0)
      return problem(400, 'ms must be a number >= 0');
    sim.advance(ms);
    return json(200, { now: new Date(sim.now()).toISOString() });
  }
  if (path === '/__sim/switches') {
    const problems = switchProblems(body);
    if (problems.length > 0) return problem(400, problems.join('; '));
    sim.setSwitches(body as Partial<SimSwitches>);
    return json(200, sim.switches());
  }
  if (path === '/__sim/revoke') {
    if (typeof body.key !== 'string') return problem(400, 'key must be a string');
    sim.revokeKey(body.key);
    return json(200, { revoked: true });
  }
  return problem(404, `no control route POST ${path}`);
}

export function control(
  sim: Simulator,
  method: string,
  url: URL,
  bodyText: string,
  paymentUrl: string,
): Reply {
  if (method === 'GET') {
    if (url.pathname === '/__sim/state') return state(sim, url.origin, paymentUrl);
    if (url.pathname === '/__sim/requests') return requestCounts(sim);
    if (url.pathname === '/__sim/truth') return truth(sim, url.searchParams);
    return problem(404, `no control route GET ${url.pathname}`);
  }
  if (method !== 'POST') return problem(405, `method ${method} not allowed on control routes`);
  const body = parseBody(bodyText);
  return body ? post(sim, url.pathname, body) : problem(400, 'body must be a JSON object');
}
