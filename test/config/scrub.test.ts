/**
 * Secrets out of error text, in every form a service or a library could write them, and URLs without
 * credentials or queries (a transport error quoting the URL must not carry them into logs or Redis).
 */
import { describe, expect, it } from '@jest/globals';
import { errorForStatus, errorForTransport } from '../../src/upstream/http-errors.js';
import { scrubSecrets, stripUrlSecrets } from '../../src/scrub.js';

const KEY = 'sk_live/a+b "c"';

describe('scrubbing', () => {
  it('removes the key as configured, URL-encoded (both ways), and JSON-escaped (once and twice)', () => {
    const forms = [
      KEY,
      encodeURIComponent(KEY),
      encodeURIComponent(KEY).replace(/%20/g, '+'),
      JSON.stringify(KEY).slice(1, -1),
      JSON.stringify(JSON.stringify(KEY).slice(1, -1)).slice(1, -1),
    ];
    for (const form of forms)
      expect(scrubSecrets(`before ${form} after`, [KEY])).toBe('before [redacted] after');
  });

  it('strips user, password, query and fragment from every URL in a text', () => {
    expect(stripUrlSecrets('GET http://user:pw@pay.example:8080/api/x?key=abc#frag failed')).toBe(
      'GET http://pay.example:8080/api/x failed',
    );
  });

  it('errors built from a service message or a transport failure hold neither', () => {
    const status = errorForStatus(
      { endpoint: '/api/transferts' },
      401,
      JSON.stringify({
        statusCode: 401,
        message: `bad key ${encodeURIComponent(KEY)} at https://a:b@auth.example/k?token=zzz`,
        error: 'Unauthorized',
      }),
      KEY,
    );
    expect(status.message).toContain('bad key [redacted] at https://auth.example/k');
    expect(status.message).not.toMatch(/zzz|a:b@/);
    const transport = errorForTransport(
      { endpoint: '/api/transferts' },
      Object.assign(new Error(`connect ECONNREFUSED for http://u:secretpw@10.0.0.1/api?x=${KEY}`), {
        code: 'ECONNREFUSED',
      }),
      1000,
      KEY,
    );
    expect(transport.message).toContain('http://10.0.0.1/api');
    expect(transport.message).not.toMatch(/secretpw|sk_live/);
    expect(transport.stack).not.toMatch(/secretpw|sk_live/);
  });
});
