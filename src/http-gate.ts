/**
 * The gate in front of every port paysync listens on (the worker's metrics/probe and dashboard servers,
 * `paysync sim`), applied before any route or authentication runs:
 *
 * - **Connections are capped** (`maxConnections` per port). Past the cap the connection that has waited
 *   longest without a request in progress (a client still sending its headers, or an idle keep-alive
 *   connection) is closed to make room, as nginx drains reusable connections when its pool is full; only
 *   when every connection is serving a request is the new one refused. So a flood of slow-header
 *   connections can neither take the process's file descriptors (the worker's Redis, PostgreSQL and
 *   service connections need them) nor keep a probe from getting in.
 * - **Timeouts**: the headers within `headersTimeoutMs`, the whole request within `requestTimeoutMs`, an
 *   idle keep-alive connection closed after `keepAliveTimeoutMs`, a silent socket after `socketTimeoutMs`
 *   (a client that stops reading its response).
 * - **Host allow-list** (unless `hosts: 'any'`): loopback names, IP literals (a DNS-rebinding page needs a
 *   name of its own; Prometheus and Kubernetes probes reach a pod by IP) and the configured names; any
 *   other Host gets 421 with what to set.
 * - **Security headers** on every response (`securityHeaders`): no MIME sniffing, no framing, a
 *   Content-Security-Policy that runs only the server's own scripts and loads nothing from elsewhere.
 */
import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import type { Socket } from 'node:net';
import { hostNameOf, isIpLiteral, isLoopbackHost, normaliseHostName } from './host-names.js';

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
  'Content-Security-Policy': [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'", // the status page's <style>, Bull Board's inline styles
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; '),
  'Referrer-Policy': 'no-referrer',
};

export interface HostRule {
  /** Names answered besides loopback names and IP literals (lower-case, no port). */
  allowed: readonly string[];
  /** The setting a refused Host is told to add its name to. */
  setting: string;
}

export interface GateOptions {
  hosts: HostRule | 'any';
  securityHeaders: boolean;
  maxConnections?: number;
  headersTimeoutMs?: number;
  requestTimeoutMs?: number;
  keepAliveTimeoutMs?: number;
  socketTimeoutMs?: number;
}

export const GATE_DEFAULTS = {
  maxConnections: 64,
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 30_000,
  keepAliveTimeoutMs: 5_000,
  socketTimeoutMs: 60_000,
} as const;

/** Whether a request naming `header` as its Host may be answered under `rule`. */
export function hostAllowed(header: string | undefined, rule: HostRule | 'any'): boolean {
  if (rule === 'any') return true;
  const name = hostNameOf(header);
  if (name === null) return false;
  return isLoopbackHost(name) || isIpLiteral(name) || rule.allowed.some((n) => normaliseHostName(n) === name);
}

function gated(listener: RequestListener, options: GateOptions): RequestListener {
  const { hosts } = options;
  return (req, res) => {
    if (options.securityHeaders)
      for (const [name, value] of Object.entries(SECURITY_HEADERS)) res.setHeader(name, value);
    if (hostAllowed(req.headers.host, hosts)) return listener(req, res);
    const setting = hosts === 'any' ? '' : hosts.setting;
    res.writeHead(421, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
    res.end(`paysync: this port does not answer to that Host name; add it to ${setting} if it is yours\n`);
  };
}

/**
 * Caps the open connections of `server` at `max`: past it, the longest-waiting connection with no request
 * in progress is closed, or the new one when every connection is busy.
 */
export function capConnections(server: Server, max: number): void {
  const open = new Set<Socket>();
  const waiting = new Set<Socket>(); // no request in progress, oldest first
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    waiting.add(socket);
    socket.once('close', () => {
      open.delete(socket);
      waiting.delete(socket);
    });
    if (open.size <= max) return;
    const oldest = waiting.values().next().value as Socket; // the new socket is waiting: never undefined
    oldest.destroy();
    open.delete(oldest);
    waiting.delete(oldest);
  });
  server.on('request', (req: IncomingMessage, res) => {
    const socket = req.socket;
    waiting.delete(socket);
    res.once('finish', () => {
      if (!socket.destroyed && open.has(socket)) waiting.add(socket); // at the end: the most recent
    });
  });
}

/** A node:http server for `listener` behind the gate (not yet listening). */
export function createGatedServer(listener: RequestListener, options: GateOptions): Server {
  const o = { ...GATE_DEFAULTS, ...options };
  const server = createServer(
    {
      headersTimeout: o.headersTimeoutMs,
      requestTimeout: o.requestTimeoutMs,
      keepAliveTimeout: o.keepAliveTimeoutMs,
      // how often the two timeouts above are checked (Node's default, 30 s, would let them run 4x over)
      connectionsCheckingInterval: Math.min(1_000, o.headersTimeoutMs),
    },
    gated(listener, o),
  );
  server.setTimeout(o.socketTimeoutMs, (socket: Socket) => socket.destroy());
  capConnections(server, o.maxConnections);
  return server;
}
