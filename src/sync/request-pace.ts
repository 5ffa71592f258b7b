/**
 * How hard a source's service is being asked, across every worker, for `backfill --wait` and the status
 * page: the requests per second the rate gate granted over the last complete seconds, against
 * `UPSTREAM_RPS`, and the latency the workers measured (both kept by the gate's script, rate-gate.ts).
 * With these two, ops can tell who holds a backfill back: at the ceiling it is `UPSTREAM_RPS`; below it
 * with a slow service, the service's latency (too few requests in flight, or the service itself).
 */
import type { Redis } from 'ioredis';

/** Seconds the rate is averaged over (the gate keeps 30). */
const RATE_SECONDS = 10;
/** A latency reported longer ago than this is not shown. */
const LATENCY_FRESH_S = 60;

export function paceKeyOf(prefix: string, source: string): string {
  return `${prefix}:rate:${source}:pace`;
}

export interface RequestPace {
  source: string;
  /** Requests granted per second over the last complete seconds (up to 10; 0 when none). */
  perSecond: number;
  /** `UPSTREAM_RPS`. */
  ceiling: number;
  /** The service's smoothed answer time in ms, as the workers last reported it (null: none recently). */
  latencyMs: number | null;
}

/** The pace from the gate's hash and the server's second (pure). */
export function paceFrom(
  fields: Record<string, string>,
  nowSecond: number,
  source: string,
  ceiling: number,
): RequestPace {
  let granted = 0;
  let earliest = nowSecond;
  for (const [field, value] of Object.entries(fields)) {
    if (!field.startsWith('s:')) continue;
    const second = Number(field.slice(2));
    if (second >= nowSecond || second < nowSecond - RATE_SECONDS) continue; // complete seconds only
    granted += Number(value);
    earliest = Math.min(earliest, second);
  }
  const span = nowSecond - earliest;
  const latencyAt = Number(fields.latencyAt);
  const fresh = Number.isFinite(latencyAt) && nowSecond - latencyAt <= LATENCY_FRESH_S;
  const latency = Number(fields.latency);
  return {
    source,
    perSecond: span > 0 ? granted / span : 0,
    ceiling,
    latencyMs: fresh && Number.isFinite(latency) ? latency : null,
  };
}

export async function readRequestPace(
  redis: Redis,
  prefix: string,
  source: string,
  ceiling: number,
): Promise<RequestPace> {
  const [fields, [seconds]] = await Promise.all([redis.hgetall(paceKeyOf(prefix, source)), redis.time()]);
  return paceFrom(fields, Number(seconds), source, ceiling);
}

/** "19.3 of 20 req/s, the service answers in 152 ms" (with who holds it back, when that is clear). */
export function describePace(p: RequestPace): string {
  const rate = `${p.perSecond.toFixed(p.perSecond >= 100 ? 0 : 1)} of ${p.ceiling} req/s`;
  const latency = p.latencyMs === null ? '' : `, the service answers in ${Math.round(p.latencyMs)} ms`;
  const atCeiling = p.perSecond >= 0.9 * p.ceiling ? ' (at UPSTREAM_RPS)' : '';
  return `${rate}${atCeiling}${latency}`;
}
