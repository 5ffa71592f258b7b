/**
 * Control routes for a simulator running in another process (`paysync sim`), all under `/__sim/` and
 * without an API key: they are a test harness, never part of the upstream interface.
 *   GET  /__sim/state      now, switches, organisations, keys, record counts
 *   POST /__sim/advance    {"ms": N}            moves simulated time forward
 *   POST /__sim/switches   {partial switches}   validated; unknown names are refused, and so is
 *                          `outage: "refused"` (it closes the port these routes listen on)
 *   POST /__sim/revoke     {"key": K}           the key gets 401 from now on
 *   GET  /__sim/requests[?windowMs=N]   request counts by endpoint and status, the most requests in any
 *                          window of N ms (default 1000), and the outages with their request counts
 *   GET  /__sim/log        the request log (SimRequestLogEntry[])
 *   POST /__sim/clear-log  empties the request log
 *   GET  /__sim/truth?org=ID&stream=payments|transfers    the truth as JSON
 *   GET  /__sim/copies?org=ID&stream=payments|transfers   the records listed twice, both listings
 */
import { servedCopies } from './page.js';
import { maxRequestsInWindow } from './request-log.js';
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

function requestCounts(sim: Simulator, params: URLSearchParams): Reply {
  const windowMs = Number(params.get('windowMs') ?? 1000);
  if (!Number.isFinite(windowMs) || windowMs <= 0) return problem(400, 'windowMs must be a number > 0');
  const log = sim.log.entries();
  const byEndpoint: Record<string, number> = {};
  const byStatus: Record<string, number> = {};
  for (const entry of log) {
    const endpoint = `${entry.method} ${entry.path}`;
    byEndpoint[endpoint] = (byEndpoint[endpoint] ?? 0) + 1;
    byStatus[entry.status] = (byStatus[entry.status] ?? 0) + 1;
  }
  const busiest = { windowMs, requests: maxRequestsInWindow(log, windowMs) };
  return json(200, { total: log.length, byEndpoint, byStatus, busiest, outages: sim.log.outages() });
}

/** The organisation and stream a truth-like route asks for, or the problem with them. */
function streamOf(sim: Simulator, params: URLSearchParams): [string, 'payments' | 'transfers'] | Reply {
  const org = params.get('org') ?? '';
  const stream = params.get('stream') ?? 'payments';
  if (!sim.directory.organisations.includes(org)) return problem(404, `unknown organisation "${org}"`);
  if (stream !== 'payments' && stream !== 'transfers')
    return problem(400, 'stream must be payments or transfers');
  return [org, stream];
}

function truth(sim: Simulator, params: URLSearchParams): Reply {
  const asked = streamOf(sim, params);
  if (!Array.isArray(asked)) return asked;
  const [org, stream] = asked;
  return json(200, stream === 'payments' ? sim.payments(org) : sim.transfers(org));
}

function copies(sim: Simulator, params: URLSearchParams): Reply {
  const asked = streamOf(sim, params);
  return Array.isArray(asked) ? json(200, servedCopies(sim, ...asked)) : asked;
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
    if (body.outage === 'refused')
      return problem(400, 'outage "refused" closes this port: set it in-process (setSwitches)');
    const problems = switchProblems(body);
    if (problems.length > 0) return problem(400, problems.join('; '));
    sim.setSwitches(body as Partial<SimSwitches>);
    return json(200, sim.switches());
  }
  if (path === '/__sim/clear-log') {
    sim.log.clear();
    return json(200, { cleared: true });
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
    if (url.pathname === '/__sim/requests') return requestCounts(sim, url.searchParams);
    if (url.pathname === '/__sim/log') return json(200, sim.log.entries());
    if (url.pathname === '/__sim/truth') return truth(sim, url.searchParams);
    if (url.pathname === '/__sim/copies') return copies(sim, url.searchParams);
    return problem(404, `no control route GET ${url.pathname}`);
  }
  if (method !== 'POST') return problem(405, `method ${method} not allowed on control routes`);
  const body = parseBody(bodyText);
  return body ? post(sim, url.pathname, body) : problem(400, 'body must be a JSON object');
}
