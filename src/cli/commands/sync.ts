/** `paysync sync --once [--stream payments|transfers]`: one tick of every source in this process. */
import { loadSettings, requireSources } from '../../config/settings.js';
import { UsageError } from '../../errors.js';
import { checkPostgres, createRuntime } from '../../runtime.js';
import { tickPayments, tickTransfers } from '../../sync/tick.js';
import { parseCommandArgs } from '../args.js';

const USAGE = 'paysync sync --once [--stream payments|transfers]';

export async function run(argv: string[]): Promise<number> {
  const args = parseCommandArgs(argv, { once: { type: 'boolean' }, stream: { type: 'string' } }, USAGE);
  if (!args.once)
    throw new UsageError(
      `sync runs one tick and needs --once (the worker runs the schedule); usage: ${USAGE}`,
    );
  if (args.stream !== undefined && args.stream !== 'payments' && args.stream !== 'transfers') {
    throw new UsageError(`--stream must be payments or transfers (got "${args.stream}")`);
  }
  const settings = loadSettings();
  const sources = requireSources(settings);
  const runtime = await createRuntime(settings, { name: 'paysync-sync' });
  let failed = 0;
  try {
    await checkPostgres(runtime.pool, settings.DATABASE_URL);
    for (const source of sources) failed += await tickSource(runtime, source, args.stream);
  } finally {
    await runtime.close();
  }
  return failed ? 1 : 0;
}

async function tickSource(
  runtime: Awaited<ReturnType<typeof createRuntime>>,
  source: (typeof runtime.settings.sources)[number],
  stream: string | undefined,
): Promise<number> {
  const deps = runtime.syncContext(source);
  let failed = 0;
  try {
    if (stream !== 'transfers') {
      const report = await tickPayments(deps);
      const all = [...report.windows, ...report.revisits];
      const bad = all.filter((w) => w.outcome !== 'complete');
      failed += bad.length;
      process.stdout.write(
        `${source.name} payments: ${all.length} window(s), ${all.reduce((n, w) => n + w.records, 0)} records, ` +
          `${bad.length} incomplete; checkpoint ${report.checkpoint?.toISOString() ?? 'none'}\n`,
      );
      for (const w of bad) process.stdout.write(`  incomplete ${w.window}: ${w.detail}\n`);
    }
    if (stream !== 'payments') {
      const result = await tickTransfers(deps);
      if (result && result.outcome !== 'complete') failed += 1;
      process.stdout.write(
        result
          ? `${source.name} transfers: ${result.records} records in ${result.pages} page(s), ${result.outcome}${result.detail ? ` (${result.detail})` : ''}\n`
          : `${source.name} transfers: not due (the list is not newest-first; next full scan per TRANSFERS_FULL_SCAN_EVERY)\n`,
      );
    }
    await runtime.checkpoints.recordSuccess(
      source.name,
      stream === 'transfers' ? 'transfers' : 'payments',
      new Date(),
    );
  } catch (error) {
    const { describeError, PaysyncError } = await import('../../errors.js');
    const code = error instanceof PaysyncError ? error.code : 'ERROR';
    await runtime.checkpoints.recordError(source.name, stream === 'transfers' ? 'transfers' : 'payments', {
      message: describeError(error),
      code,
    });
    throw error;
  }
  return failed;
}
