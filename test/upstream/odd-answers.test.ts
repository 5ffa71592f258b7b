/**
 * The client against a plain local HTTP server, for answers the simulator never gives: a key echoed
 * back, a 400 on a list, Retry-After as a date or too long, redirects, a 404, odd wrappers, any 2xx,
 * amounts a double would alter, and the exact query string sent.
 */
import { describe, expect, it } from '@jest/globals';
import {
  isRetryable,
  UpstreamBadRequestError,
  UpstreamProtocolError,
  UpstreamRateLimitedError,
} from '../../src/errors.js';
import { isLosslessNumber } from '../../src/upstream/exact-json.js';
import { caught, clientFor, everyRendering, localServer, reply } from '../helpers/upstream.js';

describe('answers the simulator never gives', () => {
  const secret = 'sk_local_secret_abcdef123456';

  it('scrubs a key the service echoes, and maps a 400 on a list with its message array', async () => {
    const server = await localServer((req, res) =>
      req.url?.startsWith('/api/transferts')
        ? reply(res, 401, { statusCode: 401, message: `Invalid API key ${secret}`, error: 'Unauthorized' })
        : reply(res, 400, {
            statusCode: 400,
            message: ['page must be a number', 'size too big'],
            error: 'Bad Request',
          }),
    );
    try {
      const client = clientFor(server.url, secret);
      const auth = await caught(client.listTransfers({ page: 0, size: 5 }));
      expect(auth.message).toContain('Invalid API key [redacted]');
      expect(everyRendering(auth)).not.toContain(secret);
      const bad = await caught(client.listPayments({ page: 0, size: 5 }));
      expect(bad).toBeInstanceOf(UpstreamBadRequestError);
      expect((bad as UpstreamBadRequestError).messages).toEqual(['page must be a number', 'size too big']);
      expect(server.requests).toHaveLength(2);
    } finally {
      await server.stop();
    }
  });

  it('sends only documented query parameters and the key only as X-API-Key', async () => {
    const server = await localServer((_req, res) => reply(res, 200, []));
    try {
      const client = clientFor(server.url, secret, 'api-key');
      await client.listPayments({
        page: 2,
        size: 50,
        status: 'PENDING',
        transaction_type: 'PAYMENT',
        dateFrom: 1714521600,
        dateTo: 1714608000,
      });
      await client.listTransfers({ page: 0, size: 10 });
      const [payments, transfers] = server.requests;
      expect(payments?.url).toBe(
        '/api/paiements/api-key?page=2&size=50&transaction_type=PAYMENT&status=PENDING&dateFrom=1714521600&dateTo=1714608000',
      );
      expect(transfers?.url).toBe('/api/transferts?page=0&size=10');
      expect(payments?.headers['x-api-key']).toBe(secret);
      await expect(client.listPayments({ page: 0, size: 5, dateFrom: Date.now() })).rejects.toThrow(
        /Unix seconds/,
      );
    } finally {
      await server.stop();
    }
  });

  it('honours Retry-After as an HTTP date, and stops when it is longer than maxRetryAfterMs', async () => {
    // an HTTP date has whole seconds: two seconds ahead is still at least one second ahead once truncated
    let sent = '';
    let when = () => (sent = new Date(Date.now() + 2_000).toUTCString());
    const server = await localServer((_req, res, n) =>
      n === 1 ? reply(res, 429, {}, { 'retry-after': when() }) : reply(res, 200, []),
    );
    try {
      const started = Date.now();
      await clientFor(server.url, secret).listTransfers({ page: 0, size: 5 });
      // the retry waited for the date it was given (a timer may fire a millisecond early)
      expect(Date.parse(sent) - started).toBeGreaterThanOrEqual(1_000);
      expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(sent) - 2);
      server.requests.length = 0;
      when = () => '3600';
      const client = clientFor(server.url, secret, 'organisation', {
        backoff: { baseMs: 5, maxRetryAfterMs: 10_000 },
      });
      const error = await caught(client.listTransfers({ page: 0, size: 5 }));
      expect(error).toBeInstanceOf(UpstreamRateLimitedError);
      expect((error as UpstreamRateLimitedError).retryAfterMs).toBe(3_600_000);
      expect(server.requests).toHaveLength(1);
    } finally {
      await server.stop();
    }
  });

  it('does not follow a redirect (it would carry the key elsewhere) and does not retry a 404, nor does the job layer', async () => {
    const server = await localServer((req, res) => {
      if (req.url?.startsWith('/api/transferts')) {
        res.writeHead(302, { location: '/elsewhere' });
        res.end();
      } else reply(res, 404, { statusCode: 404, message: 'Cannot GET', error: 'Not Found' });
    });
    try {
      const client = clientFor(server.url, secret);
      await expect(client.listTransfers({ page: 0, size: 5 })).rejects.toMatchObject({ status: 302 });
      const notFound = await caught(client.listPayments({ page: 0, size: 5 }));
      expect(notFound).toMatchObject({ status: 404, code: 'UPSTREAM_UNEXPECTED_STATUS' });
      expect(notFound.message).toMatch(/404.*base URL/);
      expect(isRetryable(notFound)).toBe(false); // a job failing with it is not retried either
      expect(server.requests.map((r) => r.url.split('?')[0])).toEqual([
        '/api/transferts',
        '/api/paiements/organisations',
      ]);
    } finally {
      await server.stop();
    }
  });

  it('keeps amounts exact, accepts any 2xx, and tolerates a wrapper without totals', async () => {
    const bodies = [
      { status: 203, body: '[{"id":"a","amount":1500.50},{"id":"b","amount":12345678901234567.89}]' },
      { status: 200, body: '{"data":[{"id":"c"}],"page":"0"}' },
      { status: 200, body: '{"items":[]}' },
    ];
    const server = await localServer((_req, res, n) =>
      reply(res, bodies[(n - 1) % 3]!.status, bodies[(n - 1) % 3]!.body),
    );
    try {
      const client = clientFor(server.url, secret, 'organisation', { retries: 0 });
      const exact = await client.listPayments({ page: 0, size: 5 });
      const amounts = exact.items.map((item) => (item as { amount: unknown }).amount);
      expect(amounts.every(isLosslessNumber)).toBe(true);
      expect(amounts.map(String)).toEqual(['1500.50', '12345678901234567.89']);
      const tolerant = await client.listPayments({ page: 0, size: 5 });
      expect(tolerant).toMatchObject({
        shape: 'wrapper',
        total: null,
        page: null,
        size: null,
        totalPages: null,
      });
      await expect(client.listPayments({ page: 0, size: 5 })).rejects.toThrow(UpstreamProtocolError);
    } finally {
      await server.stop();
    }
  });
});
