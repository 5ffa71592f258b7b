/**
 * A local Redis Cluster of three masters (no replicas) on free ports, each `redis-server` started and
 * stopped by pid, in a temporary folder that keeps its nodes.conf (so a restarted node rejoins with its
 * slots). Nothing persisted: a restarted master comes back empty, as after a crash without AOF.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, requireTool, run, start, type Started } from './processes.js';

export interface LocalCluster {
  ports: number[];
  /** REDIS_CLUSTER_NODES for it. */
  nodes: string;
  /** The port of the master that owns `key`'s slot. */
  ownerOf(key: string): Promise<number>;
  /** Stops that node by pid, starts it again on the same port and waits until the cluster is ok. */
  restart(port: number): Promise<void>;
  stop(): Promise<void>;
}

export async function startRedisCluster(): Promise<LocalCluster> {
  const server = requireTool('redis-server', 'redis-server');
  const cli = requireTool('redis-cli', 'redis-tools');
  const dir = mkdtempSync(join(tmpdir(), 'paysync-cluster-'));
  const ports = [await freePort(), await freePort(), await freePort()];
  const nodes = new Map<number, Started>();
  const launch = async (port: number) => {
    const node = start(
      server,
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        `nodes-${port}.conf`,
        '--save',
        '',
        '--appendonly',
        'no',
        '--cluster-node-timeout',
        '2000',
      ],
      { cwd: dir },
    );
    nodes.set(port, node);
    await node.waitFor(/Ready to accept connections/, 20_000);
  };
  const clusterOk = async () => {
    for (let i = 0; i < 200; i++) {
      const states = await Promise.all(
        ports.map((p) => run(cli, ['-p', String(p), 'cluster', 'info']).then((r) => r.stdout)),
      );
      if (states.every((s) => s.includes('cluster_state:ok'))) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the local Redis Cluster did not reach cluster_state:ok');
  };
  try {
    for (const port of ports) await launch(port);
    const created = await run(cli, [
      '--cluster',
      'create',
      ...ports.map((p) => `127.0.0.1:${p}`),
      '--cluster-replicas',
      '0',
      '--cluster-yes',
    ]);
    if (created.code !== 0)
      throw new Error(`redis-cli --cluster create failed: ${created.stdout}${created.stderr}`);
    await clusterOk();
  } catch (error) {
    for (const node of nodes.values()) await node.stop(5_000);
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    ports,
    nodes: ports.map((p) => `127.0.0.1:${p}`).join(','),
    async ownerOf(key: string) {
      // Every master but the owner answers a read of the key with a MOVED redirection.
      for (const port of ports) {
        const r = await run(cli, ['-p', String(port), 'exists', key]);
        if (!`${r.stdout}${r.stderr}`.includes('MOVED')) return port;
      }
      throw new Error(`no master owns ${key}`);
    },
    async restart(port: number) {
      await nodes.get(port)?.stop(5_000);
      await launch(port);
      await clusterOk();
    },
    async stop() {
      for (const node of nodes.values()) await node.stop(5_000);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
