/** `paysync backfill --from D --to D [--stream] [--source] [--wait] [--dry-run]` */
import { loadSettings, requireSources } from '../../config/settings.js';
import { UsageError } from '../../errors.js';
import { connectRedis } from '../../runtime.js';
import { backfillProgress, enqueueBackfill, estimateRequests, planBackfill } from '../../sync/backfill.js';
import { daysBetween, localDayOf } from '../../sync/windows.js';
import { STREAMS, type Stream } from '../../upstream/schemas.js';
import { createQueue } from '../../../jobs/queue.js';
import { backfillRange, parseCommandArgs, requireDay } from '../args.js';
import { createProgressBar } from '../progress.js';

const USAGE =
  'paysync backfill --from YYYY-MM-DD --to YYYY-MM-DD [--stream payments|transfers] [--source NAME] [--wait] [--dry-run] [--yes]';

function chooseStreams(stream: string | undefined): Stream[] {
  if (stream === undefined) return [...STREAMS];
  if (stream !== 'payments' && stream !== 'transfers')
    throw new UsageError(`--stream must be payments or transfers (got "${stream}")`);
  return [stream];
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
      'dry-run': { type: 'boolean' },
      yes: { type: 'boolean' },
    },
    USAGE,
  );
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
  const all = requireSources(settings);
  const sources = args.source ? all.filter((s) => s.name === args.source) : all;
  if (sources.length === 0)
    throw new UsageError(
      `--source ${args.source} is not configured; configured: ${all.map((s) => s.name).join(', ')}`,
    );
  let days: string[];
  try {
    days = daysBetween(from, to, settings.REPORT_TIMEZONE);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const jobs = planBackfill(settings, sources, from, to, chooseStreams(args.stream));
  if (args['dry-run']) {
    for (const job of jobs) process.stdout.write(`${job.label}\n`);
    process.stdout.write(
      `${jobs.length} job(s) over ${days.length} day(s) in ${settings.REPORT_TIMEZONE}; at least ${estimateRequests(jobs, null, settings.PAGE_SIZE)} requests ` +
        `(2 per window when a day fits one page, plus one per ${settings.PAGE_SIZE} records), at most ${settings.UPSTREAM_RPS} requests/s per source\n`,
    );
    return 0;
  }
  const redis = await connectRedis(settings.REDIS_URL, 'paysync-backfill');
  const queue = createQueue(redis, settings.PAYSYNC_QUEUE_PREFIX);
  try {
    const { added, alreadyQueued } = await enqueueBackfill(queue, jobs);
    process.stdout.write(
      `backfill ${from} → ${to}: ${added} job(s) queued, ${alreadyQueued} already queued or running\n`,
    );
    if (!args.wait) return 0;
    return await waitFor(queue, jobs);
  } finally {
    await queue.close();
    await redis.quit();
  }
}

async function waitFor(
  queue: ReturnType<typeof createQueue>,
  jobs: ReturnType<typeof planBackfill>,
): Promise<number> {
  const workers = await queue.getWorkers();
  if (workers.length === 0)
    process.stderr.write('no worker is connected yet: start one with `paysync worker` (waiting)\n');
  const bar = createProgressBar('backfill');
  const started = Date.now();
  for (;;) {
    const p = await backfillProgress(queue, jobs);
    const rate = Math.round(p.records / Math.max(1, (Date.now() - started) / 1000));
    bar.update(
      p.done + p.failed.length,
      p.total,
      `records ${p.records} (${rate}/s) failed ${p.failed.length}`,
    );
    if (p.done + p.failed.length >= p.total) {
      bar.finish();
      for (const f of p.failed) process.stderr.write(`failed: ${f.id}: ${f.reason}\n`);
      process.stdout.write(`backfill done: ${p.done}/${p.total} jobs succeeded, ${p.records} records\n`);
      return p.failed.length ? 1 : 0;
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}
