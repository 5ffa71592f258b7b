/**
 * Where the API key may be sent, tried on real processes and real HTTP: a `.env` in the working
 * directory cannot redirect the environment's key (a sources file or a base URL of its own), cannot turn
 * off TLS checks, and `http://` to a host other than this machine is refused unless PAYMENTS_ALLOW_HTTP
 * says so. Each refusal is exit 2 with one line naming the setting, before any request is made.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSettings } from '../../src/config/settings.js';
import { ConfigError } from '../../src/errors.js';
import { runCli, type CliResult } from '../helpers/cli-run.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const KEY = 'sk_live_environment_key_7Hq2';

interface Listener {
  url: string;
  keys: string[];
  server: Server;
}

/** An HTTP server that records the X-API-Key of every request (and answers an empty list). */
function recorder(host: string): Promise<Listener> {
  const keys: string[] = [];
  const server = createServer((req, res) => {
    keys.push(String(req.headers['x-api-key'] ?? ''));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end('[]');
  });
  return new Promise((resolve) =>
    server.listen(0, host, () => {
      const { port } = server.address() as AddressInfo;
      resolve({ url: `http://${host}:${port}`, keys, server });
    }),
  );
}

/** An address of this machine that is not loopback (the key would leave by it in clear text). */
function offLoopbackAddress(): string {
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return '0.0.0.0'; // a connection to it reaches this machine, but by a name that is not loopback
}

let db: TestDatabase;
let service: Listener;
let attacker: Listener;
let dir: string;
beforeAll(async () => {
  db = await createTestDatabase('redirect');
  service = await recorder('127.0.0.1');
  attacker = await recorder('127.0.0.1');
  dir = await mkdtemp(join(tmpdir(), 'paysync-dotenv-'));
});
afterAll(async () => {
  service.server.close();
  attacker.server.close();
  await rm(dir, { recursive: true, force: true });
  await db.drop();
});

const yesterday = () => new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
function baseEnv(extra: Record<string, string>): Record<string, string> {
  return {
    DATABASE_URL: db.url,
    PAYSYNC_QUEUE_PREFIX: `paysync-test-redirect-${process.pid}`,
    SYNC_START: yesterday(),
    UPSTREAM_RETRIES: '0',
    ...extra,
  };
}

/** Runs `sync --once` in a working directory holding `dotenv` as its `.env`. */
async function syncWithDotenv(dotenv: string, env: Record<string, string>): Promise<CliResult> {
  const cwd = await mkdtemp(join(dir, 'cwd-'));
  await writeFile(join(cwd, '.env'), dotenv);
  return runCli(['sync', '--once'], baseEnv(env), cwd);
}

function expectRefused(result: CliResult, setting: string): void {
  expect(result.status).toBe(2);
  const lines = result.stderr.trim().split('\n');
  expect(lines).toHaveLength(1);
  expect(lines[0]).toContain(setting);
}

describe('a .env cannot send the environment key elsewhere', () => {
  it('a .env bringing a sources file that names another host is refused; nothing reaches that host', async () => {
    const sources = join(dir, 'sources.json');
    await writeFile(
      sources,
      JSON.stringify([{ name: 'default', baseUrl: attacker.url, apiKeyEnv: 'PAYMENTS_API_KEY' }]),
    );
    const result = await syncWithDotenv(`PAYSYNC_SOURCES_FILE=${sources}\n`, {
      PAYMENTS_BASE_URL: service.url,
      PAYMENTS_API_KEY: KEY,
    });
    expectRefused(result, 'PAYSYNC_SOURCES_FILE');
    expect(attacker.keys).toEqual([]);
  });

  it('a .env bringing the base URL while the environment holds the key is refused', async () => {
    const result = await syncWithDotenv(`PAYMENTS_BASE_URL=${attacker.url}\n`, { PAYMENTS_API_KEY: KEY });
    expectRefused(result, 'PAYMENTS_BASE_URL');
    expect(attacker.keys).toEqual([]);
  });

  it('a .env holding both the key and the address (a developer machine) is used', async () => {
    const ownKey = 'sk_test_dotenv_own_key_1';
    const result = await syncWithDotenv(`PAYMENTS_BASE_URL=${service.url}\nPAYMENTS_API_KEY=${ownKey}\n`, {});
    expect(result.stderr).not.toMatch(/comes from \.env/);
    expect(service.keys).toContain(ownKey);
  });

  it('a .env sets paysync settings only: NODE_TLS_REJECT_UNAUTHORIZED and the like never reach the process', async () => {
    const path = join(dir, 'tls.env');
    await writeFile(
      path,
      'NODE_TLS_REJECT_UNAUTHORIZED=0\nHTTPS_PROXY=http://proxy.example:3128\nPAGE_SIZE=7\n',
    );
    const env: NodeJS.ProcessEnv = { PAYMENTS_BASE_URL: 'https://pay.example', PAYMENTS_API_KEY: KEY };
    const settings = loadSettings(env, path);
    expect(settings.PAGE_SIZE).toBe(7);
    expect(env.NODE_TLS_REJECT_UNAUTHORIZED).toBeUndefined();
    expect(env.HTTPS_PROXY).toBeUndefined();
  });

  it('the environment still wins over the .env for everything else', async () => {
    const path = join(dir, 'wins.env');
    await writeFile(path, 'PAGE_SIZE=7\nPAYMENTS_API_KEY=sk_dotenv_key_ignored\n');
    const env: NodeJS.ProcessEnv = {
      PAYMENTS_BASE_URL: 'https://pay.example',
      PAYMENTS_API_KEY: KEY,
      PAGE_SIZE: '9',
    };
    expect(loadSettings(env, path).PAGE_SIZE).toBe(9);
    expect(loadSettings(env, path).sources[0]?.apiKey.reveal()).toBe(KEY);
    // a key from the .env for the environment's address: that key goes where the environment says
    const fromFile = loadSettings({ PAYMENTS_BASE_URL: 'https://pay.example' }, path);
    expect(fromFile.sources[0]?.apiKey.reveal()).toBe('sk_dotenv_key_ignored');
    expect(() => loadSettings({ PAYMENTS_API_KEY: KEY }, path)).toThrow(ConfigError); // no address at all
  });
});

describe('http:// off loopback', () => {
  it('is refused (exit 2, naming PAYMENTS_BASE_URL) before the key is sent; PAYMENTS_ALLOW_HTTP=1 allows it', async () => {
    const remote = await recorder(offLoopbackAddress());
    try {
      const refused = await runCli(
        ['sync', '--once'],
        baseEnv({ PAYMENTS_BASE_URL: remote.url, PAYMENTS_API_KEY: KEY }),
      );
      expectRefused(refused, 'PAYMENTS_BASE_URL');
      expect(refused.stderr).toMatch(/clear text.*PAYMENTS_ALLOW_HTTP=1/);
      expect(remote.keys).toEqual([]);
      const allowed = await runCli(
        ['sync', '--once'],
        baseEnv({ PAYMENTS_BASE_URL: remote.url, PAYMENTS_API_KEY: KEY, PAYMENTS_ALLOW_HTTP: '1' }),
      );
      expect(allowed.stderr).not.toMatch(/clear text/);
      expect(remote.keys).toContain(KEY);
    } finally {
      remote.server.close();
    }
  });

  it('applies to every source of a sources file, and never to loopback or https', async () => {
    const sources = join(dir, 'remote-sources.json');
    await writeFile(
      sources,
      JSON.stringify([{ name: 'far', baseUrl: 'http://pay.example:8080', apiKeyEnv: 'FAR_KEY' }]),
    );
    expect(() =>
      loadSettings({ PAYSYNC_SOURCES_FILE: sources, FAR_KEY: KEY }, join(dir, 'none.env')),
    ).toThrow(/PAYSYNC_SOURCES_FILE .*source far .*clear text/);
    for (const url of ['http://127.0.0.1:9', 'http://localhost:9', 'http://[::1]:9', 'https://pay.example'])
      expect(() =>
        loadSettings({ PAYMENTS_BASE_URL: url, PAYMENTS_API_KEY: KEY }, join(dir, 'none.env')),
      ).not.toThrow();
  });
});
