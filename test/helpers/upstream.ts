/** Shared pieces of the upstream tests: a client on a key, reading every page, and leak checks. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { Secret } from '../../src/config/secret.js';
import type { Scope } from '../../src/config/settings.js';
import { createUpstreamClient, type ClientOptions, type ListPage } from '../../src/upstream/client.js';
import { readPages, type PagingSummary } from '../../src/upstream/paging.js';

export function clientFor(
  baseUrl: string,
  key: string,
  scope: Scope = 'organisation',
  extra: Partial<ClientOptions> = {},
) {
  return createUpstreamClient({
    source: { name: 'test', baseUrl, apiKey: new Secret(key), scope },
    timeoutMs: 5_000,
    backoff: { baseMs: 5, maxMs: 20 },
    ...extra,
  });
}

/** Every item of a paged list, with the pager's summary. */
export async function readAll(
  fetchPage: (page: number) => Promise<ListPage>,
  size: number,
  maxPages = 500,
): Promise<{ items: Record<string, unknown>[]; summary: PagingSummary; pages: ListPage[] }> {
  const items: Record<string, unknown>[] = [];
  const pages: ListPage[] = [];
  const gen = readPages(fetchPage, { size, maxPages, endpoint: '/test', source: 'test' });
  for (;;) {
    const next = await gen.next();
    if (next.done) return { items, summary: next.value, pages };
    pages.push(next.value);
    items.push(...(next.value.items as Record<string, unknown>[]));
  }
}

/** The thrown value, or fails the test if nothing is thrown. */
export async function caught(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

/** Every way an error could be printed or serialised: none may contain the key. */
export function everyRendering(error: unknown): string {
  const e = error as Error & { cause?: unknown };
  return [
    String(e),
    e.message,
    e.stack ?? '',
    inspect(e, { depth: 20, showHidden: true }),
    JSON.stringify(e),
    JSON.stringify(Object.getOwnPropertyDescriptors(e)),
    inspect(e.cause, { depth: 20, showHidden: true }),
  ].join('\n');
}

export interface Recorded {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
}

/** A plain local HTTP server answering with `handler`, recording every request. */
export async function localServer(handler: (req: IncomingMessage, res: ServerResponse, n: number) => void) {
  const requests: Recorded[] = [];
  const server = createServer((req, res) => {
    requests.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers });
    req.resume();
    req.on('end', () => handler(req, res, requests.length));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export function reply(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
) {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(text);
}
