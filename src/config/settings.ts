/**
 * Settings: read once at start-up from the environment (and a `.env` file in the working directory, on
 * the terms of dotenv.ts), validated with zod into a frozen object. A bad value stops the program with one
 * line naming the setting (ConfigError → exit 2). Every value is bounded by what the runtime can do with
 * it (bounds.ts). The API key is wrapped in a Secret so that no log of settings can show it.
 */
import { readFileSync } from 'node:fs';
import { IANAZone } from 'luxon';
import { z } from 'zod';
import { ConfigError } from '../errors.js';
import { MAX_RPS, MAX_SPAN_MS, MIN_RPS } from './bounds.js';
import { applyDotenv, readDotenv } from './dotenv.js';
import {
  apiKey,
  byteSize,
  decimal,
  directory,
  duration,
  flag,
  host,
  hostList,
  integer,
  serviceUrl,
  syncDay,
  url,
} from './fields.js';
import { CLUSTER_NODES_MESSAGE, isClusterNodeList, withRedisCluster } from './redis-cluster.js';
import { apiKeyProblem, clearTextProblem, Secret } from './secret.js';

export type Scope = 'organisation' | 'api-key';

export interface Source {
  name: string;
  baseUrl: string;
  apiKey: Secret;
  scope: Scope;
}

const EnvSchema = z.object({
  PAYMENTS_BASE_URL: serviceUrl('PAYMENTS_BASE_URL').optional(),
  PAYMENTS_API_KEY: apiKey('PAYMENTS_API_KEY').optional(),
  PAYMENTS_SCOPE: z
    .enum(['organisation', 'api-key'], { message: 'PAYMENTS_SCOPE must be organisation or api-key' })
    .default('organisation'),
  PAYSYNC_SOURCES_FILE: z.string().min(1).optional(),
  /** Allows `http://` to a service off this machine (the key then travels in clear): secret.ts. */
  PAYMENTS_ALLOW_HTTP: flag('PAYMENTS_ALLOW_HTTP').prefault('0'),
  DATABASE_URL: url('DATABASE_URL', ['postgres:', 'postgresql:']).default(
    'postgres://postgres@127.0.0.1:5432/paysync',
  ),
  REDIS_URL: url('REDIS_URL', ['redis:', 'rediss:']).default('redis://127.0.0.1:6379'),
  /** Redis Cluster seeds `host:port,host:port`; when set it replaces REDIS_URL (see redis-cluster.ts). */
  REDIS_CLUSTER_NODES: z.string().refine(isClusterNodeList, { message: CLUSTER_NODES_MESSAGE }).optional(),
  PAYSYNC_QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'PAYSYNC_QUEUE_PREFIX must be 1-64 letters, digits, _ . or -')
    .default('paysync'),
  EXPORT_DIR: directory('EXPORT_DIR').default('./exports'),
  REPORT_TIMEZONE: z
    .string()
    .refine((zone) => IANAZone.isValidZone(zone), {
      message: 'REPORT_TIMEZONE must be an IANA zone like Africa/Porto-Novo',
    })
    .default('UTC'),
  SYNC_START: syncDay('SYNC_START').optional(),
  SYNC_EVERY: duration('SYNC_EVERY', 1_000).prefault('5m'),
  SYNC_LOOKBACK: duration('SYNC_LOOKBACK', 0, MAX_SPAN_MS).prefault('3d'),
  SETTLE_HORIZON: duration('SETTLE_HORIZON', 0, MAX_SPAN_MS).prefault('30d'),
  SETTLE_LAG: duration('SETTLE_LAG').prefault('2m'),
  WINDOW_PAD: duration('WINDOW_PAD', 0, 86_400_000).prefault('1m'),
  TRANSFERS_FULL_SCAN_EVERY: duration('TRANSFERS_FULL_SCAN_EVERY', 1_000).prefault('1h'),
  TRANSFERS_UNORDERED_SCAN_EVERY: duration('TRANSFERS_UNORDERED_SCAN_EVERY').prefault('0s'),
  REVISIT_EVERY: duration('REVISIT_EVERY').prefault('1h'),
  /** A record time later than the worker's clock plus this is impossible: quarantined, read again later. */
  FUTURE_TOLERANCE: duration('FUTURE_TOLERANCE', 0, MAX_SPAN_MS).prefault('1d'),
  /** Failed runs of a day's window (outages aside) after which the day is shown `blocked` and alerted. */
  BLOCKED_AFTER: integer('BLOCKED_AFTER', 1, 1_000).prefault('6'),
  PAGE_SIZE: integer('PAGE_SIZE', 1, 10_000).prefault('100'),
  UPSTREAM_RPS: decimal('UPSTREAM_RPS', MIN_RPS, MAX_RPS).prefault('10'),
  UPSTREAM_TIMEOUT: duration('UPSTREAM_TIMEOUT', 100, 600_000).prefault('30s'),
  UPSTREAM_MAX_BODY: byteSize('UPSTREAM_MAX_BODY', 1024 ** 2, 1024 ** 3).prefault('32MB'),
  UPSTREAM_RETRIES: integer('UPSTREAM_RETRIES', 0, 20).prefault('5'),
  BACKFILL_MAX_DAYS: integer('BACKFILL_MAX_DAYS', 1, 100_000).prefault('366'),
  WORKER_CONCURRENCY: integer('WORKER_CONCURRENCY', 1, 64).prefault('2'),
  JOB_LOCK: duration('JOB_LOCK', 1_000, 3_600_000).prefault('30s'),
  /**
   * How long a stopping worker waits for its running jobs before it exits anyway (they are taken over
   * once their locks expire). The default stays under Kubernetes' default termination grace (30 s).
   */
  DRAIN_TIMEOUT: duration('DRAIN_TIMEOUT', 1_000, 3_600_000).prefault('25s'),
  EXPORT_AT: z
    .string()
    .regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'EXPORT_AT must be a local time HH:MM')
    .default('02:00'),
  LOG_LEVEL: z
    .enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'], {
      message: 'LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent',
    })
    .default('info'),
  LOG_FORMAT: z.enum(['json', 'pretty'], { message: 'LOG_FORMAT must be json or pretty' }).optional(),
  METRICS_PORT: integer('METRICS_PORT', 0, 65_535).optional(),
  METRICS_HOST: host('METRICS_HOST').default('127.0.0.1'),
  DASHBOARD_TOKEN: z.string().min(8, 'DASHBOARD_TOKEN must be at least 8 characters').optional(),
  /** The ops dashboard (Bull Board + status page) is served only when this is set. */
  DASHBOARD_PORT: integer('DASHBOARD_PORT', 0, 65_535).optional(),
  DASHBOARD_HOST: host('DASHBOARD_HOST').default('127.0.0.1'),
  /**
   * More Host names every ops port (metrics, probes, dashboard) answers to, comma-separated; loopback
   * names and IP literals are always answered (src/http-gate.ts).
   */
  OPS_ALLOWED_HOSTS: hostList('OPS_ALLOWED_HOSTS').default([]),
  /** The older name of OPS_ALLOWED_HOSTS, when only the dashboard checked Host: its names are added. */
  DASHBOARD_ALLOWED_HOSTS: hostList('DASHBOARD_ALLOWED_HOSTS').default([]),
});

export type Settings = Readonly<
  Omit<z.output<typeof EnvSchema>, 'PAYMENTS_API_KEY' | 'PAYMENTS_BASE_URL' | 'PAYMENTS_SCOPE'> & {
    sources: readonly Source[];
  }
>;

const SourcesFileSchema = z
  .array(
    z.object({
      name: z.string().regex(/^[A-Za-z0-9_-]{1,40}$/, 'name must be 1-40 letters, digits, _ or -'),
      baseUrl: serviceUrl('baseUrl'),
      apiKeyEnv: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'apiKeyEnv must name an environment variable'),
      scope: z.enum(['organisation', 'api-key']).default('organisation'),
    }),
  )
  .min(1, 'must list at least one source');

function firstIssue(error: z.ZodError, prefix = ''): string {
  const issue = error.issues[0];
  if (!issue) return 'invalid settings';
  const name = issue.path.map(String).join('.');
  const message = issue.message.startsWith(name.split('.').pop() ?? '\0')
    ? issue.message
    : `${name}: ${issue.message}`;
  return prefix + message;
}

function readSourcesFile(path: string, env: NodeJS.ProcessEnv): Source[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError(`PAYSYNC_SOURCES_FILE ${path} is not readable JSON: ${(error as Error).message}`);
  }
  const result = SourcesFileSchema.safeParse(parsed);
  if (!result.success) throw new ConfigError(firstIssue(result.error, `PAYSYNC_SOURCES_FILE ${path}: `));
  const names = new Set<string>();
  return result.data.map((entry) => {
    if (names.has(entry.name))
      throw new ConfigError(`PAYSYNC_SOURCES_FILE ${path}: source name ${entry.name} is listed twice`);
    names.add(entry.name);
    const key = env[entry.apiKeyEnv];
    if (!key)
      throw new ConfigError(
        `${entry.apiKeyEnv} is not set (the API key of source ${entry.name} in PAYSYNC_SOURCES_FILE)`,
      );
    const problem = apiKeyProblem(key);
    if (problem) throw new ConfigError(`${entry.apiKeyEnv} (the API key of source ${entry.name}) ${problem}`);
    return { name: entry.name, baseUrl: entry.baseUrl, apiKey: new Secret(key), scope: entry.scope };
  });
}

/** Refuses a source whose key would travel in clear text (secret.ts), naming where its URL was set. */
function assertKeysEncrypted(sources: readonly Source[], allowHttp: boolean, fromFile: string | undefined) {
  for (const source of sources) {
    const problem = clearTextProblem(source.baseUrl, allowHttp);
    if (!problem) continue;
    throw new ConfigError(
      fromFile === undefined
        ? `PAYMENTS_BASE_URL ${problem}`
        : `PAYSYNC_SOURCES_FILE ${fromFile}: baseUrl of source ${source.name} ${problem}`,
    );
  }
}

/** Parses settings from an environment. Throws ConfigError naming the first bad setting. */
export function parseSettings(env: NodeJS.ProcessEnv): Settings {
  const raw: Record<string, string> = {};
  for (const key of Object.keys(EnvSchema.shape)) {
    const value = env[key];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const result = EnvSchema.safeParse(raw);
  if (!result.success) throw new ConfigError(firstIssue(result.error));
  const { PAYMENTS_API_KEY, PAYMENTS_BASE_URL, PAYMENTS_SCOPE, ...rest } = result.data;
  let sources: Source[] = [];
  if (rest.PAYSYNC_SOURCES_FILE) {
    sources = readSourcesFile(rest.PAYSYNC_SOURCES_FILE, env);
  } else if (PAYMENTS_BASE_URL || PAYMENTS_API_KEY) {
    if (!PAYMENTS_BASE_URL)
      throw new ConfigError('PAYMENTS_BASE_URL is not set (the base URL of the payment service)');
    if (!PAYMENTS_API_KEY)
      throw new ConfigError('PAYMENTS_API_KEY is not set (the X-API-Key of the payment service)');
    sources = [
      {
        name: 'default',
        baseUrl: PAYMENTS_BASE_URL,
        apiKey: new Secret(PAYMENTS_API_KEY),
        scope: PAYMENTS_SCOPE,
      },
    ];
  }
  assertKeysEncrypted(sources, rest.PAYMENTS_ALLOW_HTTP, rest.PAYSYNC_SOURCES_FILE);
  const hosts = [...new Set([...rest.OPS_ALLOWED_HOSTS, ...rest.DASHBOARD_ALLOWED_HOSTS])];
  return Object.freeze({
    ...withRedisCluster({ ...rest, OPS_ALLOWED_HOSTS: hosts }),
    sources: Object.freeze(sources),
  });
}

/**
 * Reads `.env` from the working directory into `env` on the terms of dotenv.ts (the environment wins; a
 * `.env` never chooses where the environment's key is sent; only settings are taken), then parses.
 */
export function loadSettings(env: NodeJS.ProcessEnv = process.env, dotenvPath = '.env'): Settings {
  const file = readDotenv(dotenvPath);
  if (file) applyDotenv(env, file, Object.keys(EnvSchema.shape));
  return parseSettings(env);
}

/** The sources, or a ConfigError saying how to configure one. */
export function requireSources(settings: Settings): readonly Source[] {
  if (settings.sources.length === 0) {
    throw new ConfigError('PAYMENTS_BASE_URL and PAYMENTS_API_KEY are not set (or set PAYSYNC_SOURCES_FILE)');
  }
  return settings.sources;
}
