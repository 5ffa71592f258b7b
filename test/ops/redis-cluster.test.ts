/**
 * paysync on a Redis Cluster (REDIS_CLUSTER_NODES), against a local cluster of three masters that this
 * test starts and stops by pid:
 * - the setting: a bad value stops a command with one line naming it (exit 2); a good one replaces
 *   REDIS_URL and hash-tags the prefix;
 * - a full `paysync sync --once` and a `paysync backfill --wait` (run by a BullMQ worker on the cluster)
 *   load exactly what the service has; every key paysync and BullMQ wrote lives in one slot;
 * - the master holding that slot restarts (its data lost): the running worker reconnects, and the next
 *   backfill and sync complete and still match the service.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { resolve } from 'node:path';
import { parseSettings } from '../../src/config/settings.js';
import { startWorker, type RunningWorker } from '../../jobs/start-worker.js';
import { backfillDays } from '../helpers/backfill.js';
import { run } from '../helpers/processes.js';
import { startRedisCluster, type LocalCluster } from '../helpers/redis-cluster.js';
import {
  paymentDifferences,
  startHarness,
  transferDifferences,
  type Harness,
} from '../helpers/sync-harness.js';

const BIN = resolve(import.meta.dirname, '../../bin/paysync.js');

function paysync(args: string[], env: Record<string, string>) {
  return run(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
  });
}

describe('REDIS_CLUSTER_NODES', () => {
  it('refuses a value that is not host:port seeds, in one line naming the setting (exit 2)', async () => {
    for (const bad of ['redis://10.0.0.1:6379', '10.0.0.1', '10.0.0.1:6379,', 'a:70000']) {
      const r = await paysync(['status'], { REDIS_CLUSTER_NODES: bad });
      expect({ bad, code: r.code, lines: r.stderr.trim().split('\n').length }).toEqual({
        bad,
        code: 2,
        lines: 1,
      });
      expect(r.stderr).toMatch(
        /^paysync status: REDIS_CLUSTER_NODES must be comma-separated host:port seeds/,
      );
    }
  });

  it('replaces REDIS_URL and hash-tags the prefix, so every key lands in one slot', () => {
    const settings = parseSettings({
      REDIS_URL: 'redis://ignored:6379',
      REDIS_CLUSTER_NODES: '10.0.0.1:7000, redis-b:7001',
      PAYSYNC_QUEUE_PREFIX: 'acme',
    });
    expect(settings.REDIS_URL).toBe('redis-cluster://10.0.0.1:7000,redis-b:7001');
    expect(settings.PAYSYNC_QUEUE_PREFIX).toBe('{acme}');
    expect(parseSettings({ PAYSYNC_QUEUE_PREFIX: 'acme' }).PAYSYNC_QUEUE_PREFIX).toBe('acme');
  });
});

describe('a full sync and a backfill on a local 3-master Redis Cluster, through a node restart', () => {
  let cluster: LocalCluster | undefined;
  let h: Harness | undefined;
  let worker: RunningWorker | undefined;
  afterAll(async () => {
    await worker?.close();
    await h?.close();
    await cluster?.stop();
  });

  it('loads what the service has before and after the master of its slot restarts', async () => {
    cluster = await startRedisCluster();
    h = await startHarness({
      name: 'cluster',
      sim: { clock: 'real', days: 2, perDay: 50 },
      env: { REDIS_CLUSTER_NODES: cluster.nodes },
    });
    expect((h.runtime.redis as unknown as { isCluster?: boolean }).isCluster).toBe(true);
    const env = {
      PAYMENTS_BASE_URL: h.sim.url,
      PAYMENTS_API_KEY: h.key,
      DATABASE_URL: h.databaseUrl,
      REDIS_CLUSTER_NODES: cluster.nodes,
      PAYSYNC_QUEUE_PREFIX: h.prefix,
      SYNC_START: h.settings.SYNC_START ?? '',
      UPSTREAM_RPS: '2000',
    };
    const [from, to] = backfillDays(h, 3);
    const syncAndBackfill = async (when: string) => {
      const sync = await paysync(['sync', '--once'], env);
      expect({ when, code: sync.code, stderr: sync.code === 0 ? '' : sync.stderr }).toEqual({
        when,
        code: 0,
        stderr: '',
      });
      const backfill = await paysync(['backfill', '--from', from, '--to', to, '--wait'], env);
      expect({ when, code: backfill.code, stderr: backfill.code === 0 ? '' : backfill.stderr }).toEqual({
        when,
        code: 0,
        stderr: '',
      });
      expect(await paymentDifferences(h as Harness)).toEqual([]);
      expect(await transferDifferences(h as Harness)).toEqual([]);
    };

    worker = await startWorker(h.runtime, { schedules: false });
    await syncAndBackfill('before the restart');

    // Every key is under the hash-tagged prefix, on the one master that owns its slot.
    const prefix = `{${h.prefix}}`;
    const owner = await cluster.ownerOf(prefix);
    const keyCounts = await Promise.all(
      cluster.ports.map(async (port) => {
        const r = await run('redis-cli', ['-p', String(port), 'keys', '*']);
        const keys = r.stdout.split('\n').filter(Boolean);
        return { port, keys: keys.length, foreign: keys.filter((k) => !k.startsWith(`${prefix}:`)) };
      }),
    );
    for (const { port, keys, foreign } of keyCounts) {
      expect({ port, foreign }).toEqual({ port, foreign: [] });
      if (port === owner) expect(keys).toBeGreaterThan(0);
      else expect({ port, keys }).toEqual({ port, keys: 0 });
    }

    await cluster.restart(owner);
    await syncAndBackfill('after the restart');
  }, 300_000);
});
