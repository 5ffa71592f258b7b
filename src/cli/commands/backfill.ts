/**
 * `paysync backfill --from D --to D [--stream] [--source] [--wait [--timeout DURATION]] [--dry-run]`,
 * `paysync backfill --list`, `paysync backfill --cancel ID`.
 *
 * A backfill is recorded in PostgreSQL (its items and their state) before any job is queued: Redis may
 * lose the queue, the workers re-queue what PostgreSQL still holds open, and `--wait` reads its progress
 * from PostgreSQL. Re-running a range that is still running reuses its record; one that finished runs again.
 */
import type pg from 'pg';
import { loadSettings, requireSources, type Settings, type Source } from '../../config/settings.js';
import { parseDuration } from '../../config/duration.js';
import { describeError, UsageError } from '../../errors.js';
import { checkPostgres, connectRedis } from '../../runtime.js';
import { estimateRequests, planBackfill } from '../../sync/backfill.js';
import { daysBetween, localDayOf } from '../../sync/windows.js';
import { STREAMS, type Stream } from '../../upstream/schemas.js';
import { cancelBackfill, listBackfills, recordBackfill } from '../../warehouse/backfill-store.js';
import { createPool } from '../../warehouse/pool.js';
import { inSpan } from '../../telemetry/tracing.js';
import { QUEUE_NAME } from '../../../jobs/queue.js';
import { enqueueBackfill } from '../../../jobs/backfill-queue.js';
import { createQueue } from '../../../jobs/queue.js';
import { backfillRange, parseCommandArgs, requireDay } from '../args.js';
import { describeBackfill, waitForBackfill } from './backfill-wait.js';

const USAGE =
  'paysync backfill --from YYYY-MM-DD --to YYYY-MM-DD [--stream payments|transfers] [--source NAME] [--wait [--timeout DURATION]] [--dry-run] [--yes] | --list | --cancel ID';

function chooseStreams(stream: string | undefined): Stream[] {
  if (stream === undefined) return [...STREAMS];
  if (stream !== 'payments' && stream !== 'transfers')
    throw new UsageError(`--stream must be payments or transfers (got "${stream}")`);
  return [stream];
}

function chooseSources(settings: Settings, name: string | undefined): readonly Source[] {
  const all = requireSources(settings);
  const sources = name ? all.filter((s) => s.name === name) : all;
  if (sources.length === 0)
    throw new UsageError(
      `--source ${name} is not configured; configured: ${all.map((s) => s.name).join(', ')}`,
    );
  return sources;
}

function timeoutOf(text: string | undefined): number | null {
  if (text === undefined) return null;
  const ms = parseDuration(text);
  if (ms === null || ms <= 0)
    throw new UsageError(`--timeout must be a duration such as 90s, 30m or 2h (got "${text}")`);
  return ms;
}

export async function run(argv: string[]): Promise<number> {
  const args = parseCommandArgs(
    argv,
    {
      from: { type: 'string' },
      to: { type: 'string' },
      stream: { type: 'string' },
      source: { type: 'string' },
      wait: { type: 'boolean' },
      timeout: { type: 'string' },
      'dry-run': { type: 'boolean' },
      list: { type: 'boolean' },
      cancel: { type: 'string' },
      yes: { type: 'boolean' },
    },
    USAGE,
  );
  refuseContradictions(args);
  const timeoutMs = timeoutOf(args.timeout);
  if (timeoutMs !== null && !args.wait) throw new UsageError(`--timeout goes with --wait; usage: ${USAGE}`);
  if (args.list || args.cancel !== undefined) return manage(args.list === true, args.cancel);
  const settings = loadSettings();
  const range = backfillRange(
    {
      from: requireDay(args.from, '--from'),
      to: requireDay(args.to, '--to'),
      yes: Boolean(args.yes),
      dryRun: Boolean(args['dry-run']),
    },
    localDayOf(new Date(), settings.REPORT_TIMEZONE),
    settings.BACKFILL_MAX_DAYS,
  );
  for (const note of range.notes) process.stderr.write(`${note}\n`);
  const { from, to } = range;
  const sources = chooseSources(settings, args.source);
  const streams = chooseStreams(args.stream);
  let days: string[];
  try {
    days = daysBetween(from, to, settings.REPORT_TIMEZONE);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const jobs = planBackfill(settings, sources, from, to, streams);
  if (args['dry-run']) {
    for (const job of jobs) process.stdout.write(`${job.label}\n`);
    process.stdout.write(
      `${jobs.length} job(s) over ${days.length} day(s) in ${settings.REPORT_TIMEZONE}; at least ${estimateRequests(jobs, null, settings.PAGE_SIZE)} requests ` +
        `(2 per window when a day fits one page, plus one per ${settings.PAGE_SIZE} records), at most ${settings.UPSTREAM_RPS} requests/s per source\n`,
    );
    return 0;
  }
  const pool = createPool(settings.DATABASE_URL, { applicationName: 'paysync-backfill', max: 2 });
  try {
    await checkPostgres(pool, settings.DATABASE_URL);
    const request = {
      sources: sources.map((s) => s.name),
      streams,
      fromDay: from,
      toDay: to,
      timeZone: settings.REPORT_TIMEZONE,
    };
    // With tracing on, recording and queueing are one span whose traceparent the backfill keeps: each
    // window's span links to it, however late and however often its job is queued again.
    const backfill = await inSpan(
      'create sync',
      'producer',
      createAttributes(request, jobs.length),
      async (span) => {
        const recorded = await recordBackfill(pool, request, jobs, span.traceparent).catch(notMigrated);
        const b = recorded.backfill;
        span.setAttributes({ 'paysync.backfill.id': b.id, 'paysync.backfill.reused': recorded.reused });
        process.stdout.write(
          recorded.reused
            ? `backfill #${b.id} ${from} → ${to} is already recorded and running: ${b.done}/${b.total} item(s) done\n`
            : `backfill #${b.id} ${from} → ${to}: ${b.total} item(s) recorded\n`,
        );
        await queueItems(settings, jobs, b.id, recorded.trace);
        return b;
      },
    );
    if (!args.wait) {
      process.stdout.write(`follow it with \`paysync backfill --list\`, or wait for it with --wait\n`);
      return 0;
    }
    return await waitForBackfill(pool, settings, backfill.id, timeoutMs);
  } finally {
    await pool.end();
  }
}

/** The options that only a new backfill (--from/--to) takes. */
const RANGE_OPTIONS = ['from', 'to', 'stream', 'source', 'wait', 'timeout', 'dry-run', 'yes'] as const;

/**
 * `--list`, `--cancel ID` and a range (--from/--to) are three different commands: asking two at once is
 * refused (exit 2, one line), rather than doing one and ignoring the rest.
 */
function refuseContradictions(args: Record<string, unknown>): void {
  const given = (name: string) => args[name] !== undefined && args[name] !== false;
  const ranged = RANGE_OPTIONS.filter(given).map((name) => `--${name}`);
  const modes = [
    ...(given('list') ? ['--list'] : []),
    ...(given('cancel') ? ['--cancel'] : []),
    ...(ranged.length > 0 ? [ranged.join(' ')] : []),
  ];
  if ((given('list') || given('cancel')) && modes.length > 1)
    throw new UsageError(
      `${modes.join(' and ')} cannot go together: --list shows the backfills, --cancel ID stops one, --from/--to records one; usage: ${USAGE}`,
    );
}

/** Queues the items now; when Redis is unreachable the workers queue them from PostgreSQL once it is back. */
async function queueItems(
  settings: Settings,
  jobs: ReturnType<typeof planBackfill>,
  id: number,
  trace: string | null,
): Promise<void> {
  try {
    const redis = await connectRedis(settings.REDIS_URL, 'paysync-backfill');
    const queue = createQueue(redis, settings.PAYSYNC_QUEUE_PREFIX);
    try {
      const { added, alreadyQueued } = await enqueueBackfill(queue, jobs, id, trace);
      process.stdout.write(
        `backfill #${id}: ${added} job(s) queued, ${alreadyQueued} already queued or running\n`,
      );
    } finally {
      await queue.close();
      await redis.quit();
    }
  } catch (error) {
    // Principle 4: PostgreSQL holds the backfill, and every worker re-queues open items from it when it
    // reaches Redis (at start, on reconnect, every minute: jobs/refill.ts). Nothing is lost: exit 0.
    process.stdout.write(
      `backfill #${id} recorded; Redis unreachable: a worker queues it when Redis is back (${describeError(error)})\n`,
    );
  }
}

/** The attributes of a backfill's `create sync` span (OpenTelemetry messaging conventions, and paysync's). */
function createAttributes(
  request: { sources: string[]; streams: string[]; fromDay: string; toDay: string; timeZone: string },
  items: number,
) {
  return {
    'messaging.system': 'bullmq',
    'messaging.operation.type': 'create',
    'messaging.operation.name': 'create',
    'messaging.destination.name': QUEUE_NAME,
    'messaging.batch.message_count': items,
    'paysync.backfill.from': request.fromDay,
    'paysync.backfill.to': request.toDay,
    'paysync.backfill.sources': request.sources.join(','),
    'paysync.backfill.streams': request.streams.join(','),
    'paysync.backfill.time_zone': request.timeZone,
  };
}

function notMigrated(error: unknown): never {
  if ((error as { code?: string }).code === '42P01')
    throw new UsageError('reporting.backfills does not exist: run `paysync migrate` first');
  throw error;
}

async function manage(list: boolean, cancel: string | undefined): Promise<number> {
  const settings = loadSettings();
  const pool = createPool(settings.DATABASE_URL, { applicationName: 'paysync-backfill', max: 1 });
  try {
    await checkPostgres(pool, settings.DATABASE_URL);
    if (cancel !== undefined) return await cancelOne(pool, cancel);
    if (list) printList(await listBackfills(pool).catch(notMigrated));
    return 0;
  } finally {
    await pool.end();
  }
}

async function cancelOne(pool: pg.Pool, text: string): Promise<number> {
  const id = Number(text);
  if (!Number.isSafeInteger(id) || id <= 0)
    throw new UsageError(`--cancel takes a backfill id, a whole number (got "${text}")`);
  const outcome = await cancelBackfill(pool, id).catch(notMigrated);
  if (!outcome) {
    process.stderr.write(`no backfill #${id}; see \`paysync backfill --list\`\n`);
    return 1;
  }
  const after = outcome.backfill;
  if (!outcome.cancelled) {
    process.stderr.write(`backfill #${id} is already ${after.state}; nothing to cancel\n`);
    return 1;
  }
  process.stdout.write(
    `backfill #${id} cancelled: ${after.cancelled} item(s) will not run (a window already running finishes; ${after.done} done stay loaded)\n`,
  );
  return 0;
}

function printList(rows: Awaited<ReturnType<typeof listBackfills>>): void {
  if (rows.length === 0) {
    process.stdout.write('no backfills recorded\n');
    return;
  }
  for (const b of rows) process.stdout.write(`${describeBackfill(b)}\n`);
}
