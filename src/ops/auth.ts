/**
 * Protection of the ops dashboard. With DASHBOARD_TOKEN set every request must carry it, either as HTTP
 * basic auth (any user name, the token as password: what a browser prompts for) or as
 * `Authorization: Bearer <token>` (scripts). Requests that change something (retry, remove…) must also
 * come from the dashboard's own origin when the browser says where they come from, so another site open
 * in the same browser cannot replay the stored credentials (CSRF). Without a token nothing can be changed
 * (read-only). Which Host names are answered is decided before any of this, by the gate of every port
 * (src/http-gate.ts: DNS rebinding).
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
