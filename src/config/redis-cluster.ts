/**
 * REDIS_CLUSTER_NODES: paysync on a Redis Cluster. Pure: what the setting accepts and what it changes.
 *
 * When set (comma-separated `host:port` seeds, any few masters of the cluster), it replaces REDIS_URL:
 * - REDIS_URL becomes `redis-cluster://host:port,host:port`, the form connectRedis opens as an ioredis
 *   Cluster (every command that takes REDIS_URL therefore works on the cluster unchanged);
 * - PAYSYNC_QUEUE_PREFIX gets a hash tag, `paysync` → `{paysync}`: every key paysync and BullMQ make
 *   starts with the prefix, so all of them hash to one slot. BullMQ needs that (its Lua scripts touch
 *   several keys of a queue at once), and so do paysync's own multi-key commands (the checkpoint MULTI
 *   reads the state, open and incomplete keys together). One slot means one master carries paysync's
 *   Redis load: a few hundred small commands a second at most, far below what one Redis serves.
 * Key names therefore differ from a single Redis's: moving to a cluster starts with empty Redis state,
 * which paysync rebuilds (checkpoints from the warehouse's sync log; schedules at worker start).
 */
export const CLUSTER_URL_SCHEME = 'redis-cluster:';

export const CLUSTER_NODES_MESSAGE =
  'REDIS_CLUSTER_NODES must be comma-separated host:port seeds of the cluster, e.g. 10.0.0.1:6379,10.0.0.2:6379';

const NODE = /^([A-Za-z0-9][A-Za-z0-9.-]*):(\d{1,5})$/;

export interface ClusterNode {
  host: string;
  port: number;
}

/** The seeds of a REDIS_CLUSTER_NODES value, or null when it is not a valid list. */
export function parseClusterNodes(value: string): ClusterNode[] | null {
  const nodes: ClusterNode[] = [];
  for (const part of value.split(',').map((p) => p.trim())) {
    const m = NODE.exec(part);
    const port = Number(m?.[2]);
    if (!m || port < 1 || port > 65_535) return null;
    nodes.push({ host: m[1] as string, port });
  }
  return nodes.length > 0 ? nodes : null;
}

export function isClusterNodeList(value: string): boolean {
  return parseClusterNodes(value) !== null;
}

/** The hash-tagged prefix: `{prefix}` (all keys in one slot). */
export function clusterPrefix(prefix: string): string {
  return `{${prefix}}`;
}

/** The cluster seeds of a REDIS_URL rewritten by withRedisCluster, or null for a plain redis:// URL. */
export function clusterNodesOf(redisUrl: string): ClusterNode[] | null {
  if (!redisUrl.startsWith(`${CLUSTER_URL_SCHEME}//`)) return null;
  return parseClusterNodes(redisUrl.slice(CLUSTER_URL_SCHEME.length + 2));
}

/** Applies REDIS_CLUSTER_NODES to parsed settings (unchanged when it is not set). */
export function withRedisCluster<
  T extends { REDIS_URL: string; PAYSYNC_QUEUE_PREFIX: string; REDIS_CLUSTER_NODES?: string | undefined },
>(settings: T): T {
  if (!settings.REDIS_CLUSTER_NODES) return settings;
  const nodes = parseClusterNodes(settings.REDIS_CLUSTER_NODES) ?? [];
  return {
    ...settings,
    REDIS_URL: `${CLUSTER_URL_SCHEME}//${nodes.map((n) => `${n.host}:${n.port}`).join(',')}`,
    PAYSYNC_QUEUE_PREFIX: clusterPrefix(settings.PAYSYNC_QUEUE_PREFIX),
  };
}
