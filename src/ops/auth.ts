/**
 * Protection of the ops dashboard. With DASHBOARD_TOKEN set every request must carry it, either as HTTP
 * basic auth (any user name, the token as password: what a browser prompts for) or as
 * `Authorization: Bearer <token>` (scripts). Requests that change something (retry, remove…) must also
 * come from the dashboard's own origin when the browser says where they come from, so another site open
 * in the same browser cannot replay the stored credentials (CSRF). Every request must name one of the
 * dashboard's own Host names (DNS rebinding), and without a token nothing can be changed (read-only).
 */
import { timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The token a request presents, from basic auth (password) or a bearer header; null when none. */
export function presentedToken(header: string | undefined): string | null {
  if (!header) return null;
  const [scheme, value = ''] = header.split(' ', 2);
  if (scheme?.toLowerCase() === 'bearer') return value;
  if (scheme?.toLowerCase() !== 'basic') return null;
  const decoded = Buffer.from(value, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? null : decoded.slice(colon + 1);
}

export function requireToken(token: string | undefined) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (token === undefined) return next();
    const given = presentedToken(req.headers.authorization);
    if (given !== null && sameSecret(given, token)) return next();
    res.set('WWW-Authenticate', 'Basic realm="paysync ops", charset="UTF-8"');
    res
      .status(401)
      .type('text/plain')
      .send('paysync ops: the DASHBOARD_TOKEN is required (as the password)\n');
  };
}

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

export function sameOriginWrites(req: Request, res: Response, next: NextFunction): void {
  const origin = req.headers.origin;
  if (SAFE.has(req.method) || origin === undefined) return next();
  let host: string | null = null;
  try {
    host = new URL(origin).host;
  } catch {
    host = null;
  }
  if (host !== null && host === req.headers.host) return next();
  res.status(403).type('text/plain').send('paysync ops: cross-origin change refused\n');
}

const LOOPBACK_NAMES = ['localhost', '127.0.0.1', '::1'];

/**
 * The Host names the dashboard answers to: the loopback names, the address it is bound to (unless a
 * wildcard), and DASHBOARD_ALLOWED_HOSTS. Lower-case, without port or IPv6 brackets.
 */
export function allowedHostNames(boundHost: string, configured: readonly string[]): Set<string> {
  const names = new Set(LOOPBACK_NAMES);
  if (boundHost !== '0.0.0.0' && boundHost !== '::') names.add(boundHost.toLowerCase());
  for (const name of configured) names.add(name.toLowerCase());
  return names;
}

/** The host name of a Host header (`[::1]:8080` → `::1`, `Example.org:80` → `example.org`), or null. */
export function hostNameOf(header: string | undefined): string | null {
  if (!header) return null;
  try {
    return new URL(`http://${header}`).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return null;
  }
}

/**
 * Refuses requests whose Host is not one of `allowed`. A web page the operator visits can point its own
 * domain at 127.0.0.1 (DNS rebinding) and then talk to a loopback dashboard as "same origin": only the
 * Host header still names the attacker's domain, so it is checked on every request.
 */
export function knownHostsOnly(allowed: ReadonlySet<string>) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const name = hostNameOf(req.headers.host);
    if (name !== null && allowed.has(name)) return next();
    res
      .status(421)
      .type('text/plain')
      .send(
        'paysync ops: this dashboard does not answer to that Host name; add it to DASHBOARD_ALLOWED_HOSTS if it is yours\n',
      );
  };
}

/**
 * Without DASHBOARD_TOKEN the dashboard is read-only: any request that could change something (every
 * method but GET, HEAD and OPTIONS: Bull Board's pause, resume, retry, promote, clean, remove, add,
 * obliterate and the like) is refused.
 */
export function readOnlyWithoutToken(token: string | undefined) {
  return (req: Request, res: Response, next: NextFunction): void => {
    if (token !== undefined || SAFE.has(req.method)) return next();
    res
      .status(403)
      .type('text/plain')
      .send('paysync ops: read-only without DASHBOARD_TOKEN; set it to retry, pause or remove jobs\n');
  };
}
