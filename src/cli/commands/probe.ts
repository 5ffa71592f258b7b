/**
 * `paysync probe [--source NAME] [--json]`: measures how each source answers the interface's open points,
 * prints the findings, stores them (Redis and reporting.probe_findings) and flags what changed since the
 * last probe. Exit 0 when every source was probed (a change is news, not a failure), 1 when a probe could
 * not complete (e.g. a rejected key), 2 for bad usage or configuration.
 */
import type { Source } from '../../config/settings.js';
import { loadSettings, requireSources } from '../../config/settings.js';
import { describeError, PaysyncError, UsageError } from '../../errors.js';
import { describeFindings } from '../../probe/findings.js';
import { probeAndRecord, type ProbeReport } from '../../probe/record.js';
import { checkPostgres, createRuntime } from '../../runtime.js';
import { parseCommandArgs } from '../args.js';

const USAGE = 'paysync probe [--source NAME] [--json]';

function chooseSources(all: readonly Source[], name: string | undefined): readonly Source[] {
  if (name === undefined) return all;
  const chosen = all.filter((s) => s.name === name);
  if (chosen.length === 0) {
    throw new UsageError(
      `--source ${name} is not configured; configured: ${all.map((s) => s.name).join(', ')}`,
    );
  }
  return chosen;
}

export { probeAndRecord } from '../../probe/record.js';

export function renderReport(report: ProbeReport): string {
  const lines = describeFindings(report.findings);
  const width = Math.max(...lines.map((l) => l.label.length));
  const out = [
    `${report.source}: probed at ${report.findings.probedAt} with ${report.findings.requests} requests`,
    ...lines.map((l) => `  ${l.label.padEnd(width)}  ${l.value ?? 'unknown'}`),
  ];
  if (report.previousProbedAt === null) out.push('  first probe of this source');
  else if (report.changes.length === 0) out.push(`  no change since last probe (${report.previousProbedAt})`);
  for (const c of report.changes) {
    out.push(
      `  changed since last probe (${report.previousProbedAt}): ${c.label}: ${c.before} -> ${c.after}`,
    );
  }
  return `${out.join('\n')}\n`;
}

export async function run(argv: string[]): Promise<number> {
  const args = parseCommandArgs(argv, { source: { type: 'string' }, json: { type: 'boolean' } }, USAGE);
  const settings = loadSettings();
  const sources = chooseSources(requireSources(settings), args.source);
  const runtime = await createRuntime(settings, { name: 'paysync-probe' });
  const reports: ProbeReport[] = [];
  let failed = 0;
  try {
    await checkPostgres(runtime.pool, settings.DATABASE_URL);
    for (const source of sources) {
      try {
        const report = await probeAndRecord(runtime, source);
        reports.push(report);
        if (!args.json) process.stdout.write(renderReport(report));
      } catch (error) {
        failed += 1;
        const code = error instanceof PaysyncError ? ` [${error.code}]` : '';
        process.stderr.write(
          `paysync probe: ${source.name} could not be probed${code}: ${describeError(error)}\n`,
        );
      }
    }
  } finally {
    await runtime.close();
  }
  if (args.json) process.stdout.write(`${JSON.stringify(reports, null, 2)}\n`);
  return failed ? 1 : 0;
}
