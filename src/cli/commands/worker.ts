/** `paysync worker`: registers the schedules and processes jobs until SIGTERM/SIGINT, then drains. */
import { loadSettings, requireSources } from '../../config/settings.js';
import { UsageError } from '../../errors.js';
import { checkPostgres, createRuntime } from '../../runtime.js';
import { startWorker } from '../../../jobs/start-worker.js';
import { parseCommandArgs } from '../args.js';

const USAGE = 'paysync worker [--concurrency N] [--no-schedules]';

export async function run(argv: string[]): Promise<number> {
  const args = parseCommandArgs(
    argv,
    { concurrency: { type: 'string' }, 'no-schedules': { type: 'boolean' } },
    USAGE,
  );
  const concurrency = args.concurrency === undefined ? undefined : Number(args.concurrency);
  if (concurrency !== undefined && !(Number.isInteger(concurrency) && concurrency >= 1)) {
    throw new UsageError(`--concurrency must be a whole number of at least 1 (got "${args.concurrency}")`);
  }
  const settings = loadSettings();
  requireSources(settings);
  const runtime = await createRuntime(settings, { name: 'paysync-worker' });
  await checkPostgres(runtime.pool, settings.DATABASE_URL);
  const running = await startWorker(runtime, {
    ...(concurrency ? { concurrency } : {}),
    schedules: !args['no-schedules'],
  });
  runtime.log.info(
    {
      schedules: running.schedules,
      prefix: settings.PAYSYNC_QUEUE_PREFIX,
      sources: settings.sources.map((s) => s.name),
    },
    'worker started',
  );
  const signal = await new Promise<string>((resolve) => {
    process.once('SIGTERM', () => resolve('SIGTERM'));
    process.once('SIGINT', () => resolve('SIGINT'));
  });
  runtime.log.info({ signal }, 'draining: finishing running jobs, taking no new ones');
  await running.close();
  await runtime.close();
  runtime.log.info('worker stopped');
  return 0;
}
