/**
 * The probes of a real `paysync worker` process, the way a cluster uses them:
 * - started while its Redis and PostgreSQL (private servers of this test) are down and its database does
 *   not exist, it answers /livez at once and keeps answering; /readyz (and /healthz, the same) is 503
 *   naming what the start waits for (Redis, then PostgreSQL, then the migrations), until it takes jobs;
 * - running, it stays live through a Redis outage and a PostgreSQL outage, while /readyz names the
 *   missing one, and is ready again when they are back;
 * - SIGTERM with a job running: /readyz is 503 `draining` while /livez stays 200, and DRAIN_TIMEOUT bounds
 *   the drain: the worker exits 0 with a job still held, saying it left it to another worker.
 * Every probe goes through the port gate: a foreign Host gets 421 on /livez too (test/ops/ops-gate).
 */
import { afterAll, afterEach, describe, expect, it } from '@jest/globals';
import { backfillDays } from '../helpers/backfill.js';
import { harnessEnv, startCli, type CliChild } from '../helpers/cli-child.js';
import { httpGet } from '../helpers/ops.js';
import { PrivatePostgres, PrivateRedis } from '../helpers/private-servers.js';
import { freePort, run } from '../helpers/processes.js';
import { startHarness, type Harness } from '../helpers/sync-harness.js';
import { PAUSE_ANNOUNCEMENT } from '../../src/pause-point.js';

const children: CliChild[] = [];
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(children.splice(0).map((c) => c.kill()));
  for (const clean of cleanups.splice(0).reverse()) await clean().catch(() => undefined);
});
afterAll(async () => {
  for (const clean of cleanups.splice(0).reverse()) await clean().catch(() => undefined);
});

interface Probe {
  status: number;
  body: Record<string, string>;
}

async function probe(url: string): Promise<Probe> {
  const r = await httpGet(url);
  return { status: r.status, body: JSON.parse(r.text) as Record<string, string> };
}

/** Probes `url` until `wanted` holds (the worker reacts to a server coming back on its own schedule). */
async function until(url: string, wanted: (p: Probe) => boolean, what: string): Promise<Probe> {
  let last: Probe | undefined;
  for (let i = 0; i < 600; i++) {
    last = await probe(url);
    if (wanted(last)) return last;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} never showed ${what}; last answer: ${JSON.stringify(last)}`);
}

/** /readyz and /healthz answer alike (the second is the first's older name). */
async function readiness(base: string): Promise<Probe> {
  const ready = await probe(`${base}/readyz`);
  const health = await probe(`${base}/healthz`);
  expect(health.status).toBe(ready.status);
  expect(Object.keys(health.body).sort()).toEqual(Object.keys(ready.body).sort());
  return ready;
}

describe('a worker started while Redis and PostgreSQL are down', () => {
  it('is live at once, ready only once Redis, PostgreSQL and the migrations are there, and live through outages', async () => {
    const redis = await PrivateRedis.create();
    const postgres = await PrivatePostgres.create();
    cleanups.push(
      () => redis.stop(),
      () => postgres.destroy(),
    );
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = {
      PATH: process.env.PATH ?? '',
      PAYMENTS_BASE_URL: 'http://127.0.0.1:9',
      PAYMENTS_API_KEY: 'sk_test_probes_key',
      DATABASE_URL: postgres.url('paysync_probes'),
      REDIS_URL: redis.url,
      PAYSYNC_QUEUE_PREFIX: 'paysync-probes',
      METRICS_PORT: String(port),
      LOG_LEVEL: 'info',
    };
    const worker = startCli(['worker', '--no-schedules'], env);
    children.push(worker);

    // Nothing is reachable: it says so, and its probe server is already up (started before waiting).
    await worker.waitForStderr(`Redis is not reachable at 127.0.0.1:${redis.port}`);
    expect(await probe(`${base}/livez`)).toEqual({
      status: 200,
      body: { status: 'ok', process: 'ok', worker: 'starting' },
    });
    const noRedis = await readiness(base);
    expect(noRedis.status).toBe(503);
    expect(noRedis.body.worker).toMatch(
      new RegExp(`^starting: Redis is not reachable at 127\\.0\\.0\\.1:${redis.port} \\(REDIS_URL\\)`),
    );
    expect(noRedis.body.worker).not.toMatch(/Start it with/);

    await redis.start();
    await worker.waitForStderr(`PostgreSQL is not reachable at 127.0.0.1:${postgres.port}/paysync_probes`);
    const noPostgres = await until(
      `${base}/readyz`,
      (p) => /PostgreSQL/.test(p.body.worker ?? ''),
      'PostgreSQL',
    );
    expect(noPostgres.status).toBe(503);
    expect(noPostgres.body).toMatchObject({ redis: 'ok', postgres: expect.stringMatching(/^error: /) });
    expect((await probe(`${base}/livez`)).status).toBe(200);

    await postgres.start();
    await worker.waitForStderr('the database in DATABASE_URL does not exist: run `paysync migrate`');
    const notMigrated = await until(`${base}/readyz`, (p) => /migrate/.test(p.body.worker ?? ''), 'migrate');
    expect(notMigrated.status).toBe(503);
    expect(notMigrated.body).toMatchObject({
      redis: 'ok',
      postgres: expect.stringMatching(/database "paysync_probes" does not exist/),
    });

    const migrated = await run(process.execPath, ['bin/paysync.js', 'migrate'], {
      env: { ...env, LOG_LEVEL: 'warn' },
    });
    expect({ code: migrated.code, stderr: migrated.stderr }).toEqual({ code: 0, stderr: '' });
    await worker.waitForStderr('"msg":"worker started"');
    const ready = await readiness(base);
    expect(ready).toEqual({
      status: 200,
      body: { status: 'ok', process: 'ok', redis: 'ok', postgres: 'ok', migrations: 'ok', worker: 'ok' },
    });
    expect(await probe(`${base}/livez`)).toEqual({
      status: 200,
      body: { status: 'ok', process: 'ok', worker: 'taking jobs' },
    });

    // Redis goes away: not ready (naming Redis), still live; back, ready again.
    await redis.stop();
    const redisDown = await readiness(base);
    expect(redisDown.status).toBe(503);
    expect(redisDown.body).toMatchObject({ redis: expect.stringMatching(/^error: /), postgres: 'ok' });
    expect((await probe(`${base}/livez`)).status).toBe(200);
    await redis.start();
    await until(`${base}/readyz`, (p) => p.status === 200, 'ready after Redis came back');

    // PostgreSQL goes away: the same.
    await postgres.stop();
    const postgresDown = await readiness(base);
    expect(postgresDown.status).toBe(503);
    expect(postgresDown.body).toMatchObject({
      redis: 'ok',
      postgres: expect.stringMatching(/^error: /),
      migrations: expect.stringMatching(/^error: /),
    });
    expect((await probe(`${base}/livez`)).status).toBe(200);
    await postgres.start();
    await until(`${base}/readyz`, (p) => p.status === 200, 'ready after PostgreSQL came back');

    // No job running: SIGTERM drains at once.
    worker.process.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    expect(worker.stderr()).toContain('"msg":"worker stopped"');
  }, 180_000);

  it('stops while still waiting: SIGTERM ends the wait and exits 0', async () => {
    const port = await freePort();
    const worker = startCli(['worker'], {
      PATH: process.env.PATH ?? '',
      PAYMENTS_BASE_URL: 'http://127.0.0.1:9',
      PAYMENTS_API_KEY: 'sk_test_probes_key',
      REDIS_URL: 'redis://127.0.0.1:1',
      METRICS_PORT: String(port),
      LOG_LEVEL: 'info',
    });
    children.push(worker);
    await worker.waitForStderr('Redis is not reachable at 127.0.0.1:1');
    worker.process.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    expect(worker.stderr()).toContain('worker stopped before it started');
  }, 60_000);
});

describe('draining', () => {
  let h: Harness | null = null;
  afterAll(async () => {
    await h?.close();
  });

  it('SIGTERM with a job running: not ready (draining), still live; DRAIN_TIMEOUT bounds the wait', async () => {
    h = await startHarness({ name: 'probesdrain', sim: { days: 1, perDay: 60 }, env: { PAGE_SIZE: '10' } });
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = harnessEnv(h, {
      METRICS_PORT: String(port),
      // long enough for the probes below on a loaded machine; the job never ends on its own
      DRAIN_TIMEOUT: '10s',
      PAYSYNC_PAUSE_AT: 'window:mid-read',
      LOG_LEVEL: 'info',
    });
    const worker = startCli(['worker', '--no-schedules'], env);
    children.push(worker);
    await worker.waitForStderr('"msg":"worker started"');
    const [from, to] = backfillDays(h, 1);
    const backfill = startCli(['backfill', '--from', from, '--to', to, '--stream', 'payments'], env);
    children.push(backfill);
    expect(await backfill.exited).toBe(0);
    await worker.waitForStderr(`${PAUSE_ANNOUNCEMENT}window:mid-read`);
    expect(await readiness(base)).toMatchObject({ status: 200 });

    worker.process.kill('SIGTERM');
    await worker.waitForStderr('"msg":"draining: finishing running jobs, taking no new ones"');
    const draining = await readiness(base);
    expect(draining.status).toBe(503);
    expect(draining.body.worker).toBe('draining: finishing running jobs, taking no new ones');
    expect(await probe(`${base}/livez`)).toEqual({
      status: 200,
      body: { status: 'ok', process: 'ok', worker: 'draining' },
    });
    // The paused job would hold the worker for ever; the bound ends the drain.
    expect(await worker.exited).toBe(0);
    expect(worker.stderr()).toContain('drain bound DRAIN_TIMEOUT reached with jobs still running');
    expect(worker.stderr()).not.toContain('"msg":"worker stopped"');
  }, 120_000);
});
