/**
 * Connection exhaustion, tried on a real worker process whose descriptor limit is lowered (`ulimit -n`
 * in the shell that execs node): hundreds of connections to the metrics and dashboard ports that send
 * their headers slowly and never finish. The worker's ports are capped (the longest-waiting idle
 * connection makes room for a new one) and headers time out, so while the flood holds its connections
 * open /healthz still answers, and the worker's own Redis, PostgreSQL and service connections still get
 * descriptors: sync goes on. Without the cap the worker hits EMFILE: the probe is refused and ticks fail.
 * `paysync sim` has the same gate with a larger cap (512): flooded past the usual limit of 1,024
 * descriptors, it still answers.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { startSimulator } from '../../src/sim/server.js';
import type { RunningSimulator } from '../../src/sim/types.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { freePort, start, type Started } from '../helpers/processes.js';

const DESCRIPTORS = 256;
const FLOOD_PER_PORT = 400; // together more than the worker's whole descriptor budget

let sim: RunningSimulator;
let db: TestDatabase;
let worker: Started;
let metricsPort: number;
let dashboardPort: number;
const flood: Socket[] = [];

beforeAll(async () => {
  sim = await startSimulator({ seed: 11, days: 2, perDay: 20, clock: 'real' });
  db = await createTestDatabase('flood');
  [metricsPort, dashboardPort] = [await freePort(), await freePort()];
  const org = sim.organisations[0] as string;
  const env = {
    PATH: process.env.PATH ?? '',
    PAYMENTS_BASE_URL: sim.url,
    PAYMENTS_API_KEY: sim.keys.organisation[org] as string,
    DATABASE_URL: db.url,
    PAYSYNC_QUEUE_PREFIX: `paysync-test-flood-${process.pid}`,
    SYNC_START: new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10),
    SYNC_EVERY: '1s',
    METRICS_PORT: String(metricsPort),
    DASHBOARD_PORT: String(dashboardPort),
    LOG_FORMAT: 'json',
    LOG_LEVEL: 'info',
  };
  worker = start(
    'sh',
    ['-c', `ulimit -n ${DESCRIPTORS} && exec "$0" bin/paysync.js worker`, process.execPath],
    {
      env,
    },
  );
  await worker.waitFor(/worker started/, 60_000);
});

afterAll(async () => {
  for (const s of flood) s.destroy();
  await worker?.stop(10_000);
  await sim?.stop();
  await db?.drop();
});

/** Opens `count` connections to `port` that send part of a request's headers and then nothing. */
function slowHeaders(port: number, count: number): Promise<void> {
  const settled = Array.from({ length: count }, () => {
    const socket = connect(port, '127.0.0.1');
    flood.push(socket);
    socket.on('error', () => undefined); // a reset is what a capped port may answer
    return new Promise<void>((resolve) => {
      socket.once('connect', () => {
        socket.write('GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ');
        resolve();
      });
      socket.once('close', () => resolve());
    });
  });
  return Promise.all(settled).then(() => undefined);
}

function get(port: number, path: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false, timeout: 15_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer from ${path} within 15 s`)));
    req.on('error', reject);
    req.end();
  });
}

/** Resolves when a window fetched after `since` is recorded complete (sync is working). */
async function windowCompletedAfter(since: Date): Promise<number> {
  for (;;) {
    const { rows } = await db.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM reporting.sync_windows WHERE fetched_at > $1 AND outcome = 'complete'`,
      [since],
    );
    if ((rows[0]?.n ?? 0) > 0) return rows[0]!.n;
    if (worker.child.exitCode !== null)
      throw new Error(`the worker exited: ${worker.output().slice(-2_000)}`);
    await new Promise((resolve) => setTimeout(resolve, 200)); // polling the database for an observed event
  }
}

describe('a flood of slow-header connections', () => {
  it('leaves the probe answering and sync working, with the worker at 256 descriptors', async () => {
    const floodStart = new Date();
    await Promise.all([slowHeaders(metricsPort, FLOOD_PER_PORT), slowHeaders(dashboardPort, FLOOD_PER_PORT)]);
    const holding = flood.filter((s) => !s.destroyed && !s.closed).length;
    expect(holding).toBeGreaterThan(0); // the attack is still on: its connections are open
    const health = await get(metricsPort, '/healthz');
    expect(health.status).toBe(200);
    const status = await get(dashboardPort, '/status');
    expect(status.status).toBe(200);
    expect(await windowCompletedAfter(floodStart)).toBeGreaterThan(0);
    expect(worker.output()).not.toMatch(/EMFILE/);
  });

  it('leaves `paysync sim` answering at 1,024 descriptors', async () => {
    const port = await freePort();
    const simulator = start(
      'sh',
      ['-c', `ulimit -n 1024 && exec "$0" bin/paysync.js sim --port ${port} --days 1`, process.execPath],
      { env: { PATH: process.env.PATH ?? '' } },
    );
    try {
      await simulator.waitFor(/listening on/);
      await slowHeaders(port, 1_100);
      expect(flood.filter((s) => !s.destroyed && !s.closed).length).toBeGreaterThan(0);
      expect((await get(port, '/__sim/state')).status).toBe(200);
    } finally {
      await simulator.stop(5_000);
    }
  });
});
