/**
 * `backfill --wait` rides out a PostgreSQL outage as it rides out a Redis one, on a PostgreSQL cluster of
 * the test's own (initdb and pg_ctl as the `postgres` user, on a free port): the wait is recorded, the
 * cluster is stopped (every connection cut, as a crash would), the wait says "PostgreSQL unreachable since
 * T" and keeps waiting; the cluster is started again, the wait reads its progress again, a worker runs the
 * backfill, and the wait exits 0 with every payment of the range in the warehouse. Each step waits on what
 * the child prints, never on a sleep.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import pg from 'pg';
import { startCli, type CliChild } from '../helpers/cli-child.js';
import { PrivatePostgres } from '../helpers/private-servers.js';
import { run } from '../helpers/processes.js';
import { middayBefore } from '../helpers/sync-harness.js';
import { startSimulator } from '../../src/sim/server.js';
import type { RunningSimulator } from '../../src/sim/types.js';
import { localDayOf } from '../../src/sync/windows.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const children: CliChild[] = [];
const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  await Promise.all(children.splice(0).map((c) => c.kill()));
  for (const clean of cleanups.splice(0).reverse()) await clean().catch(() => undefined);
});

describe('backfill --wait through a PostgreSQL outage', () => {
  it('says "PostgreSQL unreachable since T", keeps waiting, and exits 0 once the backfill is done', async () => {
    const postgres = await PrivatePostgres.create();
    cleanups.push(() => postgres.destroy());
    await postgres.start();
    const sim: RunningSimulator = await startSimulator({
      seed: 11,
      days: 2,
      perDay: 15,
      now: middayBefore('UTC'),
    });
    cleanups.push(() => sim.stop());
    const org = sim.organisations[0] as string;
    const prefix = `paysync-test-pgwait-${randomBytes(4).toString('hex')}`;
    cleanups.push(async () => {
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    });
    const env = {
      PATH: process.env.PATH ?? '',
      PAYMENTS_BASE_URL: sim.url,
      PAYMENTS_API_KEY: sim.keys.organisation[org] as string,
      DATABASE_URL: postgres.url('paysync_pgwait'),
      REDIS_URL,
      PAYSYNC_QUEUE_PREFIX: prefix,
      UPSTREAM_RPS: '2000',
      LOG_LEVEL: 'warn',
    };
    const migrated = await run(process.execPath, ['bin/paysync.js', 'migrate'], { env });
    expect({ code: migrated.code, stderr: migrated.stderr }).toEqual({ code: 0, stderr: '' });

    const to = localDayOf(new Date(sim.now().getTime() - 86_400_000), 'UTC');
    const from = localDayOf(new Date(sim.now().getTime() - 2 * 86_400_000), 'UTC');
    const waiting = startCli(['backfill', '--from', from, '--to', to, '--stream', 'payments', '--wait'], env);
    children.push(waiting);
    await waiting.waitForStderr('no worker connected'); // recorded and queued; nothing runs it yet

    await postgres.stop();
    await waiting.waitForStderr('waits for: PostgreSQL unreachable since ');
    expect(waiting.process.exitCode).toBeNull(); // it did not give up
    const said = waiting
      .stderr()
      .split('\n')
      .find((l) => l.includes('PostgreSQL unreachable since'))!;
    expect(said).toMatch(
      /^backfill #1 waits for: PostgreSQL unreachable since \d{4}-\d\d-\d\dT[\d:.]+Z \(.+\); the workers carry the backfill on/,
    );

    await postgres.start();
    // reading its progress again: what it waits for is the backfill's items once more
    await waiting.waitForStderr('no worker connected', 60_000, waiting.stderr().length);

    const worker = startCli(['worker', '--no-schedules'], env);
    children.push(worker);
    expect(await waiting.exited).toBe(0);
    expect(waiting.stdout()).toMatch(/backfill done: #1 done/);

    const client = new pg.Client({ connectionString: env.DATABASE_URL });
    await client.connect();
    try {
      const { rows } = await client.query<{ id: string }>('SELECT id FROM reporting.payments ORDER BY id');
      const expected = sim
        .payments(org)
        .filter((p) => [from, to].includes(p.createdAt.slice(0, 10)))
        .map((p) => p.id)
        .sort();
      expect(expected.length).toBeGreaterThan(0);
      expect(rows.map((r) => r.id).filter((id) => expected.includes(id))).toEqual(expected);
    } finally {
      await client.end();
    }
  });
});
