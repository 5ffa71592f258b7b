/**
 * Liveness and readiness. /healthz: the process answers and can reach Redis and PostgreSQL (each check
 * bounded by a timeout, so a hung dependency reports instead of hanging the probe). /readyz: healthy and
 * the worker is taking jobs (false while it starts or drains after SIGTERM).
 */
import type { Redis } from 'ioredis';
import type { Pool } from 'pg';

export interface HealthDeps {
  redis: Pick<Redis, 'ping'>;
  pool: Pick<Pool, 'query'>;
  /** Whether this process is taking work; absent means always. */
  ready?: () => boolean;
  timeoutMs?: number;
}

export interface HealthReport {
  ok: boolean;
  checks: Record<string, string>;
}

async function probe(check: () => Promise<unknown>, timeoutMs: number): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([check(), timeout]);
    return 'ok';
  } catch (error) {
    return `error: ${(error as Error).message}`;
  } finally {
    clearTimeout(timer);
  }
}

export async function checkHealth(deps: HealthDeps): Promise<HealthReport> {
  const timeoutMs = deps.timeoutMs ?? 2_000;
  const [redis, postgres] = await Promise.all([
    probe(() => deps.redis.ping(), timeoutMs),
    probe(() => deps.pool.query('SELECT 1'), timeoutMs),
  ]);
  const checks = { process: 'ok', redis, postgres };
  return { ok: redis === 'ok' && postgres === 'ok', checks };
}

export async function checkReady(deps: HealthDeps): Promise<HealthReport> {
  const health = await checkHealth(deps);
  const taking = deps.ready ? deps.ready() : true;
  return {
    ok: health.ok && taking,
    checks: { ...health.checks, worker: taking ? 'ok' : 'not taking jobs (starting or draining)' },
  };
}
