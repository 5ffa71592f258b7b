/**
 * `startSimulator`: the simulated payment service on plain node:http (no framework: it is also the
 * benchmark's upstream). Every API request meets the request gate first (outage, rate limit, faults,
 * latency: gate.ts; a gateway's faults come before auth), then is authorised and answered; control
 * routes under `/__sim/` skip both.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createGatedServer } from '../http-gate.js';
import { control } from './control.js';
import { NOT_JSON_BODY, quotingKey } from './faults.js';
import { RequestGate } from './gate.js';
import { Listener } from './listener.js';
import { servedCopies } from './page.js';
import { wallNow } from './request-log.js';
import { type Endpoint, ROUTES, type Reply, authorize, initialize, json, listPage } from './routes.js';
import { Simulator } from './sim.js';
import { switchProblems } from './switches.js';
import type { RunningSimulator, SimOptions, SimSwitches } from './types.js';

interface Context {
  sim: Simulator;
  gate: RequestGate;
  paymentUrl: () => string;
  /** Counts list requests, for the `alternate` shape. */
  lists: number;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Encodes once: measuring the string and then writing it would convert a large page to UTF-8 twice. */
function send(res: ServerResponse, reply: Reply): void {
  const body = Buffer.from(reply.body, 'utf8');
  res.writeHead(reply.status, { ...reply.headers, 'content-length': body.length });
  res.end(body);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const keyOf = (req: IncomingMessage): string | undefined => {
  const header = req.headers['x-api-key'];
  return Array.isArray(header) ? header[0] : header;
};

/** An API request the gate let through: auth, then the endpoint. */
function answer(
  ctx: Context,
  endpoint: Endpoint,
  req: IncomingMessage,
  url: URL,
  body: string,
  notJson: boolean,
): Reply {
  const key = authorize(ctx.sim, endpoint, keyOf(req));
  if (!('secret' in key)) return key;
  if (endpoint === 'initialize') return initialize(ctx.sim, key, body, ctx.paymentUrl());
  if (notJson) return { status: 200, headers: { 'content-type': 'text/html' }, body: NOT_JSON_BODY };
  const shape = ctx.sim.switches().shape;
  const wrap = shape === 'wrapper' || (shape === 'alternate' && ctx.lists++ % 2 === 1);
  return listPage(ctx.sim, endpoint, key, url.searchParams, wrap);
}

async function handle(ctx: Context, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const receivedAt = wallNow();
  const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
  const method = req.method ?? 'GET';
  const body = await readBody(req);
  if (url.pathname.startsWith('/__sim/'))
    return send(res, control(ctx.sim, method, url, body, ctx.paymentUrl()));
  const endpoint = ROUTES[`${method} ${url.pathname}`];
  const switches = ctx.sim.switches();
  const plan = endpoint ? ctx.gate.plan(switches, endpoint, receivedAt) : undefined;
  const log = (status: number) =>
    ctx.sim.log.record({
      at: ctx.sim.now(),
      receivedAt,
      delayedMs: plan?.delayMs ?? 0,
      outage: plan?.outage ?? 'none',
      method,
      path: url.pathname,
      query: url.search,
      status,
    });
  if (!endpoint || !plan) {
    log(404);
    return send(
      res,
      json(404, { statusCode: 404, message: `Cannot ${method} ${url.pathname}`, error: 'Not Found' }),
    );
  }
  if (plan.delayMs > 0) await sleep(plan.delayMs);
  const { verdict } = plan;
  if (verdict.kind === 'reset') {
    log(0); // no answer at all: the connection is destroyed
    req.socket.destroy();
    return;
  }
  const reply =
    verdict.kind === 'reply' ? verdict.reply : answer(ctx, endpoint, req, url, body, verdict.notJson);
  log(reply.status);
  send(res, quotingKey(reply, keyOf(req), switches.keyInErrors));
}

/**
 * The port's connection cap and timeouts (src/http-gate.ts, as on every paysync port), not its Host rule:
 * the simulator serves generated data to whatever name reaches it (compose calls it `simulator`). Idle
 * keep-alive connections live 30 s (a benchmark's client reuses them); a silent socket 10 minutes, longer
 * than any `slowMs`.
 */
const PORT_LIMITS = {
  hosts: 'any',
  securityHeaders: false,
  maxConnections: 512,
  keepAliveTimeoutMs: 30_000,
  socketTimeoutMs: 600_000,
} as const;

function checkedSwitches(partial: Partial<SimSwitches>): Partial<SimSwitches> {
  const problems = switchProblems(partial);
  if (problems.length > 0) throw new RangeError(`simulator switches: ${problems.join('; ')}`);
  return partial;
}

export async function startSimulator(options: SimOptions = {}): Promise<RunningSimulator> {
  const sim = new Simulator({ ...options, switches: checkedSwitches(options.switches ?? {}) });
  let url = '';
  const paymentUrl = () => options.paymentUrl ?? `${url}/pay`;
  const ctx: Context = { sim, gate: new RequestGate(sim.seed), paymentUrl, lists: 0 };
  const server = createGatedServer((req, res) => {
    handle(ctx, req, res).catch((error: unknown) => {
      if (!res.headersSent) send(res, json(500, { statusCode: 500, message: String(error) }));
      else res.destroy();
    });
  }, PORT_LIMITS);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  url = `http://${host}:${address.port}`;
  const listener = new Listener(server, address.address, address.port);
  listener.follow(sim.switches().outage === 'refused');
  return running(sim, listener, url, paymentUrl());
}

function running(sim: Simulator, listener: Listener, url: string, paymentUrl: string): RunningSimulator {
  return {
    url,
    paymentUrl,
    keys: sim.directory.keys,
    organisations: sim.directory.organisations,
    now: () => new Date(sim.now()),
    advance: (ms) => sim.advance(ms),
    setSwitches: (partial) => {
      sim.setSwitches(checkedSwitches(partial));
      listener.follow(sim.switches().outage === 'refused');
    },
    switches: () => sim.switches(),
    payments: (org) => sim.payments(org),
    transfers: (org) => sim.transfers(org),
    addTransfer: (org, createdAt) => sim.addTransfer(org, createdAt.getTime()).id,
    addPayment: (org, createdAt) => sim.addPayment(org, createdAt.getTime()).id,
    removeTransfer: (org, id) => {
      if (!sim.store.remove('transfers', org, id)) throw new RangeError(`no transfer ${id} in ${org}`);
    },
    requestLog: () => sim.log.entries(),
    clearRequestLog: () => sim.log.clear(),
    outages: () => sim.log.outages(),
    copies: (org, stream) => servedCopies(sim, org, stream),
    settled: () => listener.settled(),
    revokeKey: (key) => sim.revokeKey(key),
    stop: () => listener.close(),
  };
}
