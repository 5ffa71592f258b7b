/**
 * The composition root: the adapters a command needs, built once from settings and wired into the core
 * (the warehouse pool and the sync core's PostgreSQL ports, Redis, the logger, and per source an upstream
 * client behind the shared rate ceiling). `close()` releases everything, so a command exits on its own.
 * Only the CLI and jobs/ import this file; the layers below take the `Runtime` it builds
 * (src/sync/services.ts).
 */
import { Cluster, Redis } from 'ioredis';
import { clusterNodesOf } from './config/redis-cluster.js';
import type { Pool } from 'pg';
import type { Settings, Source } from './config/settings.js';
import { ServiceUnreachableError } from './errors.js';
import { createLogger, type Logger } from './log.js';
import { createUpstreamClient, type UpstreamClient } from './upstream/client.js';
import { createPool } from './warehouse/pool.js';
import { describePending, pendingMigrations, shippedMigrations } from './warehouse/migration-status.js';
import { pgSyncWarehouse } from './warehouse/sync-ports.js';
import { PgTransferMemory } from './warehouse/transfer-positions.js';
import { CheckpointStore } from './sync/checkpoints.js';
import { createRateGate } from './sync/rate-gate.js';
import { createRequestPacer, pagesAhead, type RequestPacer } from './sync/request-pacer.js';
import { Circuit } from './sync/circuit.js';
import { Permits } from './sync/permits.js';
import { BARE_WINDOWS_AT_ONCE } from './sync/window-run.js';
import {
  DEFAULT_SYNC_OPTIONS,
  type SyncContext,
  type SyncOptions,
  type TickDeps,
  type WindowReport,
} from './sync/context.js';
import type { Runtime } from './sync/services.js';

export type { Runtime };

type ResponseInfo = { endpoint: string; status: number | 'network'; attempt: number; ms: number };

export interface RuntimeOptions {
  log?: Logger;
  /** A connection name shown in pg_stat_activity and Redis CLIENT LIST. */
  name?: string;
  onResponse?: (source: string, info: ResponseInfo) => void;
  /** Scales the client's retry backoff (tests use a few milliseconds). */
  backoff?: { baseMs?: number; maxMs?: number; maxRetryAfterMs?: number };
  /** The clock of sync decisions (tests follow the simulator's). */
  now?: () => Date;
}

function describeRedis(url: string): string {
  const nodes = clusterNodesOf(url);
  if (nodes) return `the cluster ${nodes.map((n) => `${n.host}:${n.port}`).join(',')} (REDIS_CLUSTER_NODES)`;
  const u = new URL(url);
  return `${u.hostname}:${u.port || '6379'} (REDIS_URL)`;
}

/**
 * A client for REDIS_URL: a plain Redis, or (the `redis-cluster://` form REDIS_CLUSTER_NODES makes, see
 * config/redis-cluster.ts) an ioredis Cluster. A Cluster answers the same commands paysync and BullMQ
 * send (BullMQ detects it and keeps a queue's keys in the prefix's slot), so it is handed around as the
 * Redis type: every key paysync uses shares the hash-tagged prefix, so no command spans two slots.
 */
function redisClient(url: string, name: string): Redis {
  const nodes = clusterNodesOf(url);
  if (!nodes) {
    return new Redis(url, {
      maxRetriesPerRequest: null,
      connectionName: name,
      lazyConnect: true,
      connectTimeout: 3_000,
      retryStrategy: (n) => Math.min(n * 200, 2_000),
    });
  }
  const cluster = new Cluster(nodes, {
    lazyConnect: true,
    clusterRetryStrategy: (n) => Math.min(n * 200, 2_000),
    // A master restarting or failing over answers CLUSTERDOWN/TRYAGAIN for a moment: retry, as the
    // single-Redis client retries a reconnect.
    retryDelayOnClusterDown: 300,
    retryDelayOnTryAgain: 300,
    redisOptions: { maxRetriesPerRequest: null, connectionName: name, connectTimeout: 3_000 },
  });
  return cluster as unknown as Redis;
}

function describePostgres(url: string): string {
  const u = new URL(url);
  return `${u.hostname || 'localhost'}:${u.port || '5432'}/${u.pathname.slice(1) || 'postgres'}`;
}

/** Opens a Redis connection that fails fast when Redis is down instead of retrying forever. */
export async function connectRedis(url: string, name: string): Promise<Redis> {
  const redis = redisClient(url, name);
  // ioredis reports connection trouble as 'error' events (and reconnects by itself); without a listener
  // Node prints each one with a stack. The first one explains a failed start; later ones show up as
  // failing commands where the work is.
  let lastError: Error | undefined;
  redis.on('error', (error: Error) => {
    lastError = error;
  });
  try {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error('timed out')), 3_500);
    });
    await Promise.race([redis.connect(), timeout]).finally(() => clearTimeout(timer));
    await redis.ping();
  } catch (error) {
    redis.disconnect();
    const reason = (lastError ?? (error as Error)).message.replace(/\.+$/, '');
    throw new ServiceUnreachableError(
      `Redis is not reachable at ${describeRedis(url)}: ${reason}. Start it with ` +
        `\`redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no\` or \`docker compose up -d redis\``,
    );
  }
  return redis;
}

/** Checks that PostgreSQL answers (the server, not the database, which `migrate` creates). */
export async function checkPostgres(pool: Pool, url: string): Promise<void> {
  try {
    await pool.query('SELECT 1');
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === '3D000') return; // database missing: migrate creates it
    throw new ServiceUnreachableError(
      `PostgreSQL is not reachable at ${describePostgres(url)} (DATABASE_URL): ${(error as Error).message}. Start it with ` +
        '`pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start` or `docker compose up -d postgres`',
    );
  }
}

/**
 * PostgreSQL answers and the database holds every migration this paysync ships; else exit 2 with the fix
 * (a database that does not exist or is not migrated cannot tell anything, and a command run on it would
 * fail on a missing table after it had done half its work). Reads the ledger only; writes nothing.
 */
export async function requireMigrated(pool: Pool, url: string): Promise<void> {
  await checkPostgres(pool, url);
  const pending = await pendingMigrations(pool, await shippedMigrations());
  if (pending.length > 0)
    throw new ServiceUnreachableError(
      `the database in DATABASE_URL is not migrated (or not fully): ${describePending(pending)}`,
    );
}

export function syncOptionsFrom(settings: Settings): SyncOptions {
  return {
    ...DEFAULT_SYNC_OPTIONS,
    pageSize: settings.PAGE_SIZE,
    padMs: settings.WINDOW_PAD,
    futureToleranceMs: settings.FUTURE_TOLERANCE,
  };
}

export async function createRuntime(settings: Settings, options: RuntimeOptions = {}): Promise<Runtime> {
  const log = options.log ?? createLogger({ level: settings.LOG_LEVEL, format: settings.LOG_FORMAT });
  const name = options.name ?? 'paysync';
  const pool = createPool(settings.DATABASE_URL, { applicationName: name });
  const redis = await connectRedis(settings.REDIS_URL, name).catch(async (error) => {
    await pool.end();
    throw error;
  });
  const checkpoints = new CheckpointStore(redis, settings.PAYSYNC_QUEUE_PREFIX);
  const syncOptions = syncOptionsFrom(settings);
  const warehouse = pgSyncWarehouse(pool);
  const transferMemory = new PgTransferMemory(pool);
  const now = options.now ?? (() => new Date());
  const clients = new Map<string, { client: UpstreamClient; circuit: Circuit }>();
  const pacers = new Map<string, RequestPacer>();
  const wired = (source: Source) => {
    let c = clients.get(source.name);
    if (!c) {
      const gate = createRateGate(redis, {
        prefix: settings.PAYSYNC_QUEUE_PREFIX,
        source: source.name,
        rps: settings.UPSTREAM_RPS,
      });
      const pacer = createRequestPacer(gate, { rps: settings.UPSTREAM_RPS });
      pacers.set(source.name, pacer);
      const base = {
        source,
        timeoutMs: settings.UPSTREAM_TIMEOUT,
        maxBodyBytes: settings.UPSTREAM_MAX_BODY,
        beforeRequest: () => pacer.beforeRequest(),
        log,
        ...(options.backoff ? { backoff: options.backoff } : {}),
        ...(options.onResponse
          ? { onResponse: (info: ResponseInfo) => options.onResponse?.(source.name, info) }
          : {}),
      };
      // The circuit watches every attempt; its probes go out once each, behind the same rate ceiling.
      const circuit = new Circuit(redis, {
        prefix: settings.PAYSYNC_QUEUE_PREFIX,
        source: source.name,
        syncEveryMs: settings.SYNC_EVERY,
        now,
        log,
        probeClient: (watch) => createUpstreamClient({ ...base, retries: 0, watch }),
      });
      const client = createUpstreamClient({ ...base, retries: settings.UPSTREAM_RETRIES, watch: circuit });
      c = { client, circuit };
      clients.set(source.name, c);
    }
    return c;
  };
  const client = (source: Source): UpstreamClient => wired(source).client;
  // one bound per process, whatever the source: it bounds this process's memory
  const bareWindows = new Permits(() => BARE_WINDOWS_AT_ONCE);
  const syncContext = (source: Source, onWindow?: (r: WindowReport) => void): TickDeps => {
    const ctx: SyncContext = {
      source,
      client: client(source),
      circuit: wired(source).circuit,
      pool,
      warehouse,
      transferMemory,
      log,
      options: syncOptions,
      bareWindowTurn: () => bareWindows.take(),
      ...(onWindow ? { onWindow } : {}),
    };
    const pacer = pacers.get(source.name);
    if (pacer) ctx.pagesAhead = () => pagesAhead(pacer);
    return { ...ctx, settings, checkpoints, redis, now };
  };
  const close = async () => {
    await Promise.allSettled([pool.end(), redis.quit()]);
  };
  return {
    settings,
    log,
    pool,
    redis,
    checkpoints,
    syncOptions,
    warehouse,
    client,
    syncContext,
    pacers: () => pacers,
    now,
    close,
  };
}
