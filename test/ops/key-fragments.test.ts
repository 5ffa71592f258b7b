/**
 * A hostile service quotes pieces of the API key back (in the names of a page wrapper's keys, and in a
 * 401's message): no run of 8 of the key's characters reaches the command's output, Redis (checkpoints,
 * error entries) or any warehouse row. A key shorter than 8 characters is refused as a setting (exit 2,
 * one line), so it is never sent and never needs scrubbing.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { runCli, type CliResult } from '../helpers/cli-run.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { keyRunsIn } from '../helpers/key-runs.js';

const KEY = 'sk_live_F7q2XbW9mZ4cR8tLp0Vn6YhJ';
const PIECE = KEY.slice(2, 30); // 28 characters of it

/** Answers every list with a wrapper naming a key twice (a piece of the key in its name), every other request 401 quoting the key. */
function hostileService(): Promise<{ url: string; keysSeen: string[]; server: Server }> {
  const keysSeen: string[] = [];
  const server = createServer((req, res) => {
    keysSeen.push(String(req.headers['x-api-key'] ?? ''));
    if (req.url?.startsWith('/api/')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"data":[],"total":0,"request-key=${PIECE}":1,"request-key=${PIECE}":2}`);
      return;
    }
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ statusCode: 401, message: `Invalid API key ${PIECE}`, error: 'Unauthorized' }));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, keysSeen, server }),
    ),
  );
}

/** Every value under `prefix` as text. */
async function redisText(prefix: string): Promise<string> {
  const redis = new Redis('redis://127.0.0.1:6379', { lazyConnect: true });
  await redis.connect();
  try {
    const parts: string[] = [];
    for (const key of await redis.keys(`${prefix}*`)) {
      const type = await redis.type(key);
      if (type === 'string') parts.push(key, String(await redis.get(key)));
      else if (type === 'hash') parts.push(key, JSON.stringify(await redis.hgetall(key)));
      else if (type === 'list') parts.push(key, JSON.stringify(await redis.lrange(key, 0, -1)));
      else if (type === 'zset') parts.push(key, JSON.stringify(await redis.zrange(key, '0', '-1')));
      else if (type === 'set') parts.push(key, JSON.stringify(await redis.smembers(key)));
      else if (type === 'stream') parts.push(key, JSON.stringify(await redis.xrange(key, '-', '+')));
    }
    if (parts.length > 0) await redis.del(...(await redis.keys(`${prefix}*`)));
    return parts.join('\n');
  } finally {
    redis.disconnect();
  }
}

/** Every row of every table of the warehouse, as text. */
async function warehouseText(db: TestDatabase): Promise<string> {
  const { rows: tables } = await db.pool.query<{ t: string }>(
    `SELECT format('%I.%I', table_schema, table_name) AS t FROM information_schema.tables
      WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
  );
  const parts: string[] = [];
  for (const { t } of tables) {
    const { rows } = await db.pool.query<{ row: string }>(`SELECT x::text AS row FROM ${t} x`);
    parts.push(...rows.map((r) => r.row));
  }
  return parts.join('\n');
}

let db: TestDatabase;
let service: Awaited<ReturnType<typeof hostileService>>;
beforeAll(async () => {
  db = await createTestDatabase('keyruns');
  service = await hostileService();
});
afterAll(async () => {
  service.server.close();
  await db.drop();
});

function env(prefix: string, key: string): Record<string, string> {
  const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
  return {
    PAYMENTS_BASE_URL: service.url,
    PAYMENTS_API_KEY: key,
    DATABASE_URL: db.url,
    PAYSYNC_QUEUE_PREFIX: prefix,
    SYNC_START: yesterday,
    UPSTREAM_RETRIES: '0',
    LOG_FORMAT: 'json',
    LOG_LEVEL: 'trace',
  };
}

describe('pieces of the key quoted by the service', () => {
  it('reach neither the output, nor Redis, nor the warehouse', async () => {
    const prefix = `paysync-test-keyruns-${process.pid}`;
    const result: CliResult = await runCli(['sync', '--once'], env(prefix, KEY));
    expect(service.keysSeen).toContain(KEY); // the requests were made with it
    const output = result.stdout + result.stderr;
    expect(output).toContain('page wrapper names'); // the error was reported …
    expect(output).toContain('[redacted]'); // … with the piece taken out
    expect(keyRunsIn(output, KEY)).toEqual([]);
    const redis = await redisText(prefix);
    expect(redis).toContain('page wrapper names'); // the checkpoint's last error …
    expect(keyRunsIn(redis, KEY)).toEqual([]); // … without the piece
    expect(keyRunsIn(await warehouseText(db), KEY)).toEqual([]);
  });

  it('a key shorter than 8 characters is refused before anything is sent', async () => {
    const before = service.keysSeen.length;
    const result = await runCli(['sync', '--once'], env(`paysync-test-keyruns-short-${process.pid}`, 'Q~z'));
    expect(result.status).toBe(2);
    const lines = result.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/PAYMENTS_API_KEY must be at least 8 characters/);
    expect(service.keysSeen.length).toBe(before);
  });
});
