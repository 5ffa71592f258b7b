/**
 * Each command says what it did and exits with the code that says it:
 * - `backfill` with Redis down records the backfill in PostgreSQL and exits 0 saying a worker queues it when
 *   Redis is back (and a worker's re-fill does);
 * - `export`, `reconcile` and `sync --once` against a database that does not exist, or was never migrated,
 *   exit 2 with the fix, as `status` does, and `sync --once` leaves nothing in Redis;
 * - a worker whose metrics or dashboard port cannot be served exits 2 before it sends a request, loads a
 *   record or registers a schedule;
 * - contradictory backfill flags are refused (exit 2, one line) and nothing is done.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createServer, type Server } from 'node:net';
import pg from 'pg';
import { refillQueue } from '../../jobs/refill.js';
import { createQueue } from '../../jobs/queue.js';
import { listBackfills } from '../../src/warehouse/backfill-store.js';
import { harnessEnv, runCli } from '../helpers/cli-run.js';
import { SERVER_URL, uniqueName, urlFor } from '../helpers/db.js';
import { startHarness, type Harness } from '../helpers/sync-harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'clitruth', sim: { days: 2, perDay: 10 } });
});
afterAll(async () => {
  await h?.close();
});

const env = (extra: Record<string, string> = {}) =>
  harnessEnv(h, { REDIS_URL: h.settings.REDIS_URL, ...extra });
const day = () => h.settings.SYNC_START as string;
const stderrLines = (text: string) => text.split('\n').filter((l) => l.trim() !== '');
const keysOf = async (prefix: string) => h.runtime.redis.keys(`${prefix}*`);

describe('backfill with Redis down', () => {
  it('is recorded in PostgreSQL, exits 0 saying a worker queues it when Redis is back; a re-fill does', async () => {
    const r = await runCli(
      ['backfill', '--from', day(), '--to', day()],
      env({ REDIS_URL: 'redis://127.0.0.1:1' }),
    );
    expect(r.status).toBe(0);
    const id = (await listBackfills(h.runtime.pool)).at(0)?.id;
    expect(id).toBeDefined();
    expect(r.stdout).toContain(
      `backfill #${id} recorded; Redis unreachable: a worker queues it when Redis is back`,
    );
    expect(await keysOf(h.prefix)).toEqual([]); // nothing could be queued

    const queue = createQueue(h.runtime.redis, h.prefix);
    try {
      const refilled = await refillQueue(queue, h.runtime.pool, h.settings, { schedules: false });
      expect(refilled.added).toBe(refilled.items);
      expect(refilled.items).toBeGreaterThan(0);
      expect(await queue.getJobCountByTypes('prioritized', 'waiting')).toBe(refilled.items);
    } finally {
      await queue.obliterate({ force: true });
      await queue.close();
    }
  });
});

describe('commands against a database that does not exist or is not migrated', () => {
  let emptyName: string;
  beforeAll(async () => {
    emptyName = uniqueName('clitruth_empty');
    const admin = new pg.Client({ connectionString: SERVER_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${emptyName}`);
    await admin.end();
  });
  afterAll(async () => {
    const admin = new pg.Client({ connectionString: SERVER_URL });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS ${emptyName} WITH (FORCE)`);
    await admin.end();
  });

  const commands = () => [
    ['export', '--day', day()],
    ['reconcile', '--day', day()],
    ['sync', '--once'],
    ['status'],
  ];

  it.each([
    ['does not exist', () => urlFor(uniqueName('clitruth_missing')), /does not exist: run `paysync migrate`/],
    ['was never migrated', () => urlFor(emptyName), /not migrated .*run `paysync migrate`/],
  ])('a database that %s: exit 2, one line with the fix, nothing written to Redis', async (_, url, fix) => {
    const prefix = `${h.prefix}-db`;
    for (const args of commands()) {
      const r = await runCli(args, env({ DATABASE_URL: url(), PAYSYNC_QUEUE_PREFIX: prefix }));
      const lines = stderrLines(r.stderr);
      expect({ args, status: r.status, lines: lines.length }).toEqual({ args, status: 2, lines: 1 });
      expect(lines[0]).toMatch(fix);
      expect(r.stderr).not.toMatch(/relation .* does not exist/);
    }
    expect(await keysOf(prefix)).toEqual([]);
    expect(h.sim.requestLog()).toEqual([]);
  });
});

describe('a worker whose ops port cannot be served', () => {
  let blocker: Server;
  let port: number;
  beforeAll(async () => {
    blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    port = (blocker.address() as { port: number }).port;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => blocker.close(() => resolve()));
  });

  it.each(['METRICS', 'DASHBOARD'])(
    '%s_PORT busy: exit 2 naming it, before any request, record or schedule',
    async (name) => {
      const prefix = `${h.prefix}-${name.toLowerCase()}`;
      const r = await runCli(
        ['worker'],
        env({ [`${name}_PORT`]: String(port), PAYSYNC_QUEUE_PREFIX: prefix }),
      );
      const lines = stderrLines(r.stderr).filter((l) => !l.startsWith('{')); // the JSON log aside
      expect(r.status).toBe(2);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(`${name}_PORT ${port} on ${name}_HOST 127\\.0\\.0\\.1 cannot be served`),
      );
      expect(h.sim.requestLog()).toEqual([]); // no request to the service
      expect(await keysOf(prefix)).toEqual([]); // no schedule, no queue, no checkpoint
      const { rows } = await h.runtime.pool.query('SELECT count(*)::int AS n FROM reporting.sync_windows');
      expect(rows[0].n).toBe(0); // no record loaded
    },
  );
});

describe('contradictory backfill flags', () => {
  it.each([
    [['--list', '--cancel', '1'], /--list and --cancel cannot go together/],
    [['--list', '--from', '2026-01-01', '--to', '2026-01-01'], /--list and --from --to cannot go together/],
    [
      ['--cancel', '1', '--from', '2026-01-01', '--to', '2026-01-02'],
      /--cancel and --from --to cannot go together/,
    ],
    [['--list', '--wait'], /--list and --wait cannot go together/],
  ])('backfill %j: exit 2, one line, nothing done', async (args, said) => {
    const before = await listBackfills(h.runtime.pool);
    const r = await runCli(['backfill', ...args], env());
    expect(r.status).toBe(2);
    expect(stderrLines(r.stderr)).toHaveLength(1);
    expect(r.stderr).toMatch(said);
    expect(r.stdout).toBe('');
    expect(await listBackfills(h.runtime.pool)).toEqual(before); // none recorded, none cancelled
  });
});
