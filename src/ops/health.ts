/**
 * The probes of paysync's own health (never the service's: a down service is `paysync status`'s and the
 * alerts' business, and restarting or unlisting a worker would not heal it).
 *
 * - liveness (/livez): the process runs and its event loop turns; nothing else. The answer is made on the
 *   event loop, so a loop blocked for good never answers and the probe's timeout says so. It holds while
 *   Redis or PostgreSQL is down and while the worker starts or drains: restarting a worker heals none of
 *   those.
 * - readiness (/readyz, and /healthz, its older name): Redis and PostgreSQL answer, the database holds
 *   every migration this paysync ships, and the worker is taking jobs (not while it starts or drains).
 *   Each check is bounded by a timeout, so a hung dependency reports instead of hanging the probe.
 */
import type { Redis } from 'ioredis';
import type { Pool } from 'pg';
import { describePending } from '../warehouse/migration-status.js';

export interface HealthDeps {
  redis: Pick<Redis, 'ping'>;
  pool: Pick<Pool, 'query'>;
  /** The migrations this paysync ships that the database lacks; absent: not checked. */
  pendingMigrations?: () => Promise<string[]>;
  /** Whether this process is taking work; absent means always. */
  ready?: () => boolean;
  timeoutMs?: number;
}

export interface HealthReport {
  ok: boolean;
  checks: Record<string, string>;
}

/** 'ok', the problem `check` names, or its error; a check that hangs past `timeoutMs` is an error. */
async function probe(check: () => Promise<string | undefined>, timeoutMs: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    const problem = await Promise.race([check(), timeout]);
    return typeof problem === 'string' ? problem : 'ok';
  } catch (error) {
    return `error: ${(error as Error).message}`;
  } finally {
    clearTimeout(timer);
  }
}

/** Redis, PostgreSQL and (when given) the migrations, checked at once. */
export async function checkHealth(deps: HealthDeps): Promise<HealthReport> {
  const timeoutMs = deps.timeoutMs ?? 2_000;
  const pending = deps.pendingMigrations;
  const [redis, postgres, migrations] = await Promise.all([
    probe(async () => void (await deps.redis.ping()), timeoutMs),
    probe(async () => void (await deps.pool.query('SELECT 1')), timeoutMs),
    pending
      ? probe(async () => {
          const names = await pending();
          return names.length === 0 ? 'ok' : describePending(names);
        }, timeoutMs)
      : Promise.resolve('ok'),
  ]);
  const checks: Record<string, string> = { process: 'ok', redis, postgres };
  if (pending) checks.migrations = migrations;
  return { ok: Object.values(checks).every((c) => c === 'ok'), checks };
}

export async function checkReady(deps: HealthDeps): Promise<HealthReport> {
  const health = await checkHealth(deps);
  const taking = deps.ready ? deps.ready() : true;
  return {
    ok: health.ok && taking,
    checks: { ...health.checks, worker: taking ? 'ok' : 'not taking jobs' },
  };
}
