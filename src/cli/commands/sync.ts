/** `paysync sync --once [--stream payments|transfers]`: one tick of every source in this process. */
import { loadSettings, requireSources, type Source } from '../../config/settings.js';
import { UsageError } from '../../errors.js';
import { createRuntime, requireMigrated, type Runtime } from '../../runtime.js';
import { describeOpenCircuit } from '../../sync/circuit.js';
import { runTick, type TickOutcome } from '../../sync/run-work.js';
import { STREAMS, type Stream } from '../../upstream/schemas.js';
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
  const streams: Stream[] = args.stream === undefined ? [...STREAMS] : [args.stream];
  const settings = loadSettings();
  const sources = requireSources(settings);
  const runtime = await createRuntime(settings, { name: 'paysync-sync' });
  let failed = 0;
  try {
    await requireMigrated(runtime.pool, settings.DATABASE_URL);
    for (const source of sources) failed += await tickSource(runtime, source, streams);
  } finally {
    await runtime.close();
  }
  return failed ? 1 : 0;
}

/** Ticks each stream of one source (the same use case as the worker's tick, with the same books). */
async function tickSource(runtime: Runtime, source: Source, streams: readonly Stream[]): Promise<number> {
  const deps = runtime.syncContext(source);
  let failed = 0;
  for (const stream of streams) {
    const outcome = await runTick(deps, stream);
    failed += report(source.name, outcome);
  }
  return failed;
}

/** Prints one stream's tick; returns how many of its windows are incomplete. */
function report(sourceName: string, outcome: TickOutcome): number {
  if ('down' in outcome) {
    process.stdout.write(
      `${sourceName} ${outcome.stream}: not synced, the service is down: ${describeOpenCircuit(outcome.down)}\n`,
    );
    return 1;
  }
  if (outcome.stream === 'payments') {
    const all = [...outcome.report.windows, ...outcome.report.revisits];
    const bad = all.filter((w) => w.outcome !== 'complete');
    process.stdout.write(
      `${sourceName} payments: ${all.length} window(s), ${all.reduce((n, w) => n + w.records, 0)} records, ` +
        `${bad.length} incomplete; checkpoint ${outcome.report.checkpoint?.toISOString() ?? 'none'}\n`,
    );
    for (const w of bad) process.stdout.write(`  incomplete ${w.window}: ${w.detail}\n`);
    return bad.length;
  }
  const result = outcome.result;
  process.stdout.write(
    result
      ? `${sourceName} transfers: ${result.records} records in ${result.pages} page(s), ${result.outcome}${result.detail ? ` (${result.detail})` : ''}\n`
      : `${sourceName} transfers: not due (the list is not newest-first; next full scan per TRANSFERS_FULL_SCAN_EVERY)\n`,
  );
  return result && result.outcome !== 'complete' ? 1 : 0;
}
