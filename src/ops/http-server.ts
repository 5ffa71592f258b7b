/**
 * Starting and stopping the ops HTTP servers (metrics/probes, dashboard), each behind the request gate
 * (src/http-gate.ts: connection cap, timeouts, Host allow-list, security headers) and ending with an error
 * handler that never shows a client a stack trace, whatever NODE_ENV says (Express's own handler shows
 * one outside production). `close()` also ends idle keep-alive connections (a browser or Prometheus holds
 * them open), so a draining worker exits promptly.
 */
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Express, NextFunction, Request, Response } from 'express';
import { describeError } from '../errors.js';
import { isLoopbackHost } from '../host-names.js';
import { createGatedServer } from '../http-gate.js';
import { createLogger, type Logger } from '../log.js';

export interface RunningServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

export interface ServeOptions {
  /** Host names answered besides loopback names and IP literals (OPS_ALLOWED_HOSTS). */
  allowedHosts: readonly string[];
  /** Where a failed request is logged (the client gets no detail). */
  log?: Logger;
}

/** Whether `host` only accepts connections from this machine. */
export function isLoopback(host: string): boolean {
  return isLoopbackHost(host);
}

/** The last handler of every ops app: the error is logged, the client told only that it happened. */
function errorsWithoutDetail(log: Logger) {
  return (error: unknown, req: Request, res: Response, next: NextFunction): void => {
    if (res.headersSent) return next(error); // Express then ends the connection
    const status = (error as { status?: unknown }).status;
    const code = typeof status === 'number' && status >= 400 && status < 500 ? status : 500;
    if (code === 500) log.error({ path: req.path, error: describeError(error) }, 'ops request failed');
    res
      .status(code)
      .type('text/plain')
      .send(
        code === 500 ? 'paysync ops: internal error (logged by the worker)\n' : 'paysync ops: bad request\n',
      );
  };
}

export async function listen(
  app: Express,
  host: string,
  port: number,
  options: ServeOptions = { allowedHosts: [] },
): Promise<RunningServer> {
  app.use(errorsWithoutDetail(options.log ?? createLogger({ level: 'error' })));
  const bound = host === '0.0.0.0' || host === '::' ? [] : [host];
  const server: Server = createGatedServer(app, {
    hosts: { allowed: [...bound, ...options.allowedHosts], setting: 'OPS_ALLOWED_HOSTS' },
    securityHeaders: true,
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}`,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
