/**
 * Logs: one JSON line per window with its numbers, and the API key nowhere — not in any log line of a
 * whole sync (live ticks, a backfill, retried 5xx, a source whose key is refused by a service that echoes
 * it back trimmed, URL-encoded and JSON-escaped, beside a URL with credentials), not in Redis under the
 * test prefix (BullMQ's failed job included), not in any warehouse row, not in /metrics or the status page.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Pool } from 'pg';
import { parseSettings } from '../../src/config/settings.js';
import { createLogger } from '../../src/log.js';
import { planBackfill } from '../../src/sync/backfill.js';
import { enqueueBackfill } from '../../jobs/backfill-queue.js';
import { localDayOf } from '../../src/sync/windows.js';
import { startHarness, type Harness } from '../helpers/sync-harness.js';
import { httpGet, settled, startOpsStack, type OpsStack } from '../helpers/ops.js';

const KEY = 'sk_live_LEAKCHECK_123456';
// a key whose URL-encoded and JSON-escaped forms differ from it: each must be scrubbed where it is echoed
const REFUSED_KEY = 'sk_live_LEAKCHECK_999/9+9"9';

/** A service that refuses every key and echoes it back in every form, and a URL with credentials. */
async function echoingService(): Promise<{ url: string; stop(): Promise<void> }> {
  const server = createServer((req, res) => {
    const key = String(req.headers['x-api-key'] ?? '');
    const message = [
      `key ${key} refused`,
      `trimmed ${key.trim()}`,
      `encoded ${encodeURIComponent(key)}`,
      `escaped ${JSON.stringify(key).slice(1, -1)}`,
      `see http://admin:LEAKCHECKpw@auth.example/keys?key=LEAKCHECK${encodeURIComponent(key)}`,
    ];
    res.writeHead(401, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ statusCode: 401, message, error: 'Unauthorized' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

let h: Harness | null = null;
let stack: OpsStack | null = null;
let dir: string | null = null;
const stops: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
  await stack?.close();
  await h?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
  stack = h = dir = null;
});

function memoryStream(lines: string[]): Writable {
  return new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
}

/** Every value under the prefix, whatever the key's type, as text. */
async function redisDump(redis: Redis, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for (const key of await redis.keys(`${prefix}*`)) {
    const type = await redis.type(key);
    const read: Record<string, () => Promise<unknown>> = {
      string: () => redis.get(key),
      hash: () => redis.hgetall(key),
      set: () => redis.smembers(key),
      zset: () => redis.zrange(key, '0', '-1', 'WITHSCORES'),
      list: () => redis.lrange(key, 0, -1),
      stream: () => redis.xrange(key, '-', '+'),
    };
    out.push(`${key} ${JSON.stringify(await (read[type] ?? (() => Promise.resolve(type)))())}`);
  }
  return out;
}

/** Rows of any table in the warehouse whose text holds `needle` (case-insensitive), as `table: n`. */
async function rowsHolding(pool: Pool, needle: string): Promise<string[]> {
  const { rows: tables } = await pool.query<{ t: string }>(
    `SELECT format('%I.%I', table_schema, table_name) AS t FROM information_schema.tables
      WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
  );
  const hits: string[] = [];
  for (const { t } of tables) {
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${t} x WHERE x::text ILIKE $1`, [
      `%${needle}%`,
    ]);
    if (rows[0].n > 0) hits.push(`${t}: ${rows[0].n}`);
  }
  expect(tables.length).toBeGreaterThan(3);
  return hits;
}

describe('the API key never leaves the process', () => {
  it('appears in no log line, Redis value, warehouse row, metric or status page during a whole sync', async () => {
    h = await startHarness({ name: 'opsleak', sim: { apiKeys: [KEY], malformed: 2 }, key: () => KEY });
    const echoing = await echoingService();
    stops.push(echoing.stop);
    dir = await mkdtemp(join(tmpdir(), 'paysync-leak-'));
    const sourcesFile = join(dir, 'sources.json');
    await writeFile(
      sourcesFile,
      JSON.stringify([
        { name: 'default', baseUrl: h.sim.url, apiKeyEnv: 'LEAK_GOOD' },
        { name: 'refused', baseUrl: echoing.url, apiKeyEnv: 'LEAK_REFUSED' },
      ]),
    );
    const settings = parseSettings({
      PAYSYNC_SOURCES_FILE: sourcesFile,
      LEAK_GOOD: KEY,
      LEAK_REFUSED: REFUSED_KEY,
      DATABASE_URL: h.databaseUrl,
      PAYSYNC_QUEUE_PREFIX: h.prefix,
      SYNC_START: h.settings.SYNC_START,
      UPSTREAM_RPS: '2000',
      UPSTREAM_RETRIES: '6',
      PAGE_SIZE: '25',
      METRICS_PORT: '0',
      DASHBOARD_PORT: '0',
    });
    const lines: string[] = [];
    const log = createLogger({ level: 'trace', format: 'json', destination: memoryStream(lines) });
    stack = await startOpsStack(h, { log, settings });
    h.sim.setSwitches({ serverErrorRate: 0.15 });
    const queue = stack.running.queue as unknown as Queue;
    const ticks = [
      { source: 'default', stream: 'payments' },
      { source: 'default', stream: 'transfers' },
      { source: 'refused', stream: 'payments' },
    ];
    for (const [i, data] of ticks.entries()) await queue.add('tick', data, { jobId: `tick-${i}` });
    const now = h.sim.now().getTime();
    const plan = planBackfill(
      settings,
      settings.sources.filter((s) => s.name === 'default'),
      localDayOf(new Date(now - 2 * 86_400_000), 'UTC'),
      localDayOf(new Date(now), 'UTC'),
      ['payments'],
    );
    await enqueueBackfill(queue, plan);
    expect(await settled(queue, 'tick-0')).toBe('completed');
    expect(await settled(queue, 'tick-1')).toBe('completed');
    expect(await settled(queue, 'tick-2')).toBe('failed');
    for (const job of plan) expect(await settled(queue, job.id)).toBe('completed');

    // the logs: one line per window with its numbers; retries and the refused key were logged
    const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    const windows = parsed.filter((l) => l.msg === 'window synced');
    expect(windows.length).toBeGreaterThan(2);
    for (const w of windows) {
      expect(w).toMatchObject({ level: 'info', source: 'default', stream: 'payments' });
      for (const field of ['window', 'pages', 'records', 'rejects', 'ms']) expect(w).toHaveProperty(field);
    }
    expect(parsed.some((l) => l.msg === 'job failed' && String(l.error).includes('401'))).toBe(true);
    expect(parsed.some((l) => String(l.msg).startsWith('upstream attempt failed'))).toBe(true);
    const leaked = (texts: string[]) => texts.filter((t) => /LEAKCHECK/i.test(t));
    expect(leaked(lines)).toEqual([]);
    // BullMQ's failed job (failedReason, stacktrace, data) holds the service's words, scrubbed
    const failed = await queue.getJob('tick-2');
    expect(failed?.failedReason).toMatch(
      /401 key \[redacted\] refused; trimmed \[redacted\]; encoded \[redacted\]/,
    );
    expect(failed?.failedReason).toContain('http://auth.example/keys');
    expect(leaked([JSON.stringify(failed?.toJSON())])).toEqual([]);
    expect(leaked(await redisDump(stack.runtime.redis, h.prefix))).toEqual([]);
    expect(await rowsHolding(stack.runtime.pool, 'LEAKCHECK')).toEqual([]);
    expect(leaked([(await httpGet(`${stack.ops.metricsUrl}/metrics`)).text])).toEqual([]);
    const page = await httpGet(`${stack.ops.dashboardUrl}/status`);
    expect(page.text).toContain('refused');
    expect(leaked([page.text])).toEqual([]);
  });
});

describe('the logger', () => {
  it('scrubs a secret from every line, even in messages and URLs, and prints pretty lines for terminals', () => {
    const lines: string[] = [];
    const log = createLogger({
      format: 'pretty',
      destination: memoryStream(lines),
      secrets: [{ reveal: () => KEY }],
    });
    log.warn(
      { url: `http://x/?k=${encodeURIComponent(KEY)}`, headers: { 'x-api-key': 'other' } },
      `bad ${KEY}`,
    );
    log.debug('below the level: not written');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d WARN {2}bad \[redacted\] {2}url=http:\/\/x\/\?k=\[redacted\]/);
    expect(lines[0]).not.toContain('other');
    expect(lines[0]).not.toContain('LEAKCHECK');
  });
});
