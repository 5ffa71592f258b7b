/**
 * `backfill --wait`: follows a recorded backfill in PostgreSQL (the truth, whatever happens to Redis) until
 * it is done, failed or cancelled, or `--timeout` runs out. It never waits silently: the progress line
 * says what the backfill waits for (items queued and running, no worker connected, Redis or PostgreSQL
 * unreachable and since when), and each change of that is also printed on its own line. An outage of
 * either is ridden out: the workers carry the backfill on (and wait out PostgreSQL themselves), and the
 * wait reads its progress again once PostgreSQL answers.
 */
import type pg from 'pg';
import type { Redis } from 'ioredis';
import type { Settings } from '../../config/settings.js';
import { humanDuration } from '../../config/duration.js';
import { describeError } from '../../errors.js';
import { connectRedis } from '../../runtime.js';
import { describeOpenCircuit, readCircuit } from '../../sync/circuit.js';
import { describePace, readRequestPace, type RequestPace } from '../../sync/request-pace.js';
import { reasonOfError } from '../../sync/window-reasons.js';
import {
  failedItems,
  getBackfill,
  itemLabels,
  type BackfillSummary,
} from '../../warehouse/backfill-store.js';
import { createQueue, type SyncQueue } from '../../../jobs/queue.js';
import { createProgressBar } from '../progress.js';

const POLL_MS = 1_000;
const REDIS_CHECK_MS = 2_000;

export interface RedisView {
  /** When Redis stopped answering (null: it answers). */
  unreachableSince: Date | null;
  /** Workers connected to the queue (null: unknown, Redis not answering). */
  workers: number | null;
  /** The sources whose service is down (circuit open), each described in one line. */
  down?: string[];
  /** Each source's requests per second against `UPSTREAM_RPS`, and the service's latency. */
  pace?: RequestPace[];
}

/**
 * The progress line's text after "done/total": windows and records apart, then the pace at the service
 * per source (pure). `5/10 windows, 1140 records; 19.3 of 20 req/s (at UPSTREAM_RPS), the service
 * answers in 152 ms; …`.
 */
export function progressText(b: BackfillSummary, redis: Pick<RedisView, 'pace'>, wait: string): string {
  const all = redis.pace ?? [];
  const pace = all.map((p) => (all.length > 1 ? `${p.source} ${describePace(p)}` : describePace(p)));
  return `windows, ${b.records} records; ${pace.length ? `${pace.join('; ')}; ` : ''}${wait};`;
}

/** One line for `--list` and the final report. */
export function describeBackfill(b: BackfillSummary): string {
  const parts = [`${b.done}/${b.total} windows done`];
  if (b.failed) parts.push(`${b.failed} failed`);
  if (b.running) parts.push(`${b.running} running`);
  if (b.queued) parts.push(`${b.queued} queued`);
  if (b.cancelled) parts.push(`${b.cancelled} cancelled`);
  const reruns = b.runs - (b.done + b.failed + b.running);
  return (
    `#${b.id} ${b.state} ${b.fromDay} → ${b.toDay} (${b.timeZone}) ${b.streams.join('+')} of ${b.sources.join(', ')}: ` +
    `${parts.join(', ')}; ${b.records} records${reruns > 0 ? `; ${reruns} re-run(s) after crashes or retries` : ''}; ` +
    `requested ${b.requestedAt.toISOString()}`
  );
}

/** What a running backfill is waiting for, in words (pure). */
export function waitingFor(b: BackfillSummary, redis: RedisView, now: Date): string {
  if (redis.unreachableSince)
    return (
      `Redis unreachable since ${redis.unreachableSince.toISOString()} (${humanDuration(now.getTime() - redis.unreachableSince.getTime())}); ` +
      'workers re-queue this backfill from PostgreSQL when it is back'
    );
  const items = `${b.running} running, ${b.queued} queued`;
  if (redis.down?.length)
    return `${items}; the service is down, items wait and resume when it answers: ${redis.down.join('; ')}`;
  if (redis.workers === 0) return `${items}; no worker connected: start one with \`paysync worker\``;
  return `${items} on ${redis.workers ?? '?'} worker(s)`;
}

/** Only the backfill's own sources' pace. */
function paceOf(view: RedisView, b: BackfillSummary): Pick<RedisView, 'pace'> {
  return { pace: (view.pace ?? []).filter((p) => b.sources.includes(p.source)) };
}

/** Watches Redis without ever blocking the wait: a check that takes over 2 s counts as unreachable. */
class RedisWatcher {
  private redis: Redis | null = null;
  private queue: SyncQueue | null = null;
  private view: RedisView = { unreachableSince: null, workers: null };
  private lastCheck = 0;
  constructor(private readonly settings: Settings) {}

  async check(now: Date): Promise<RedisView> {
    if (Date.now() - this.lastCheck < REDIS_CHECK_MS) return this.view;
    this.lastCheck = Date.now();
    try {
      const queue = this.queue ?? (await this.connect());
      const workers = await withTimeout(queue.getWorkers(), REDIS_CHECK_MS);
      const down = await withTimeout(this.openCircuits(), REDIS_CHECK_MS);
      const pace = await withTimeout(this.pace(), REDIS_CHECK_MS);
      this.view = { unreachableSince: null, workers: workers.length, down, pace };
    } catch {
      this.view = { unreachableSince: this.view.unreachableSince ?? now, workers: null };
    }
    return this.view;
  }

  private async openCircuits(): Promise<string[]> {
    const { redis, settings } = this;
    if (!redis) return [];
    const states = await Promise.all(
      settings.sources.map((s) => readCircuit(redis, settings.PAYSYNC_QUEUE_PREFIX, s.name)),
    );
    return states.filter((c) => c.open).map((c) => `source ${c.source}: ${describeOpenCircuit(c)}`);
  }

  private async pace(): Promise<RequestPace[]> {
    const { redis, settings } = this;
    if (!redis) return [];
    return Promise.all(
      settings.sources.map((s) =>
        readRequestPace(redis, settings.PAYSYNC_QUEUE_PREFIX, s.name, settings.UPSTREAM_RPS),
      ),
    );
  }

  private async connect(): Promise<SyncQueue> {
    this.redis = await connectRedis(this.settings.REDIS_URL, 'paysync-backfill-wait');
    this.queue = createQueue(this.redis, this.settings.PAYSYNC_QUEUE_PREFIX);
    this.queue.on('error', () => undefined); // an outage shows as failed checks, reported above
    return this.queue;
  }

  async close(): Promise<void> {
    await this.queue?.close().catch(() => undefined);
    this.redis?.disconnect();
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  promise.catch(() => undefined); // a late failure after the timeout is not unhandled
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** What a wait says while PostgreSQL does not answer (pure). */
export function postgresUnreachable(since: Date, now: Date, error: string): string {
  return (
    `PostgreSQL unreachable since ${since.toISOString()} (${humanDuration(now.getTime() - since.getTime())}: ${error}); ` +
    'the workers carry the backfill on once it is back, and this wait reads its progress again then'
  );
}

/** An error that says PostgreSQL is down, restarting or unreachable (window-reasons.ts decides). */
function isPostgresOutage(error: unknown): boolean {
  return reasonOfError(error) === 'WAREHOUSE_UNAVAILABLE';
}

/** Waits for backfill `id`; 0 when every item succeeded, 1 when one failed, it was cancelled, or time ran out. */
export async function waitForBackfill(
  pool: pg.Pool,
  settings: Settings,
  id: number,
  timeoutMs: number | null,
): Promise<number> {
  const watcher = new RedisWatcher(settings);
  const bar = createProgressBar(`backfill #${id}`);
  const started = Date.now();
  let lastWait = '';
  let last: BackfillSummary | null = null;
  let pgDownSince: Date | null = null;
  try {
    for (;;) {
      const now = new Date();
      let b: BackfillSummary | null = last;
      let view: RedisView | null = null;
      let wait: string;
      try {
        b = await getBackfill(pool, id);
        pgDownSince = null;
        if (!b) throw new Error(`backfill #${id} is no longer recorded in PostgreSQL`);
        if (b.state !== 'running') {
          bar.finish();
          return await finalReport(pool, b);
        }
        view = await watcher.check(now);
        wait = waitingFor(b, view, now);
      } catch (error) {
        if (!isPostgresOutage(error)) throw error;
        pgDownSince ??= now;
        wait = postgresUnreachable(pgDownSince, now, describeError(error));
      }
      last = b;
      const condition = wait.replace(/ \(.*?\)/, '').replace(/\d+/g, 'N'); // what, not how many
      if (condition !== lastWait) process.stderr.write(`backfill #${id} waits for: ${wait}\n`);
      lastWait = condition;
      if (b) bar.update(b.done + b.failed, b.total, progressText(b, view ? paceOf(view, b) : {}, wait));
      if (timeoutMs !== null && Date.now() - started >= timeoutMs) {
        bar.finish();
        return await timedOut(pool, b, id, timeoutMs);
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  } finally {
    await watcher.close();
  }
}

async function finalReport(pool: pg.Pool, b: BackfillSummary): Promise<number> {
  for (const f of await failedItems(pool, b.id))
    process.stderr.write(`failed: ${f.label}: ${f.detail ?? 'no reason recorded'}\n`);
  process.stdout.write(`backfill ${b.state}: ${describeBackfill(b)}\n`);
  return b.state === 'done' ? 0 : 1;
}

/** The give-up report; `b` is the last progress PostgreSQL gave (null: it never answered). */
async function timedOut(
  pool: pg.Pool,
  b: BackfillSummary | null,
  id: number,
  timeoutMs: number,
): Promise<number> {
  const left = await itemLabels(pool, id, ['running', 'queued']).catch((e: unknown) => [describeError(e)]);
  const progress = b
    ? `has ${b.running} item(s) running and ${b.queued} queued (${b.done}/${b.total} done)`
    : 'could not be read (PostgreSQL did not answer)';
  process.stderr.write(
    `gave up waiting after ${humanDuration(timeoutMs)}: backfill #${id} ${progress}. ` +
      'It carries on in the workers; follow it with `paysync backfill --list`.\n',
  );
  for (const label of left.slice(0, 20)) process.stderr.write(`  left: ${label}\n`);
  if (left.length > 20) process.stderr.write(`  … and ${left.length - 20} more\n`);
  return 1;
}
