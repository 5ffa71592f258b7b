/**
 * `paysync probe [--source NAME] [--json]`: measures how each source answers the interface's open points,
 * prints the findings, stores them (Redis and reporting.probe_findings) and flags what changed since the
 * last probe. Exit 0 when every source was probed (a change is news, not a failure), 1 when a probe could
 * not complete (e.g. a rejected key), 2 for bad usage or configuration.
 */
import type { Source } from '../../config/settings.js';
import { loadSettings, requireSources } from '../../config/settings.js';
import { describeError, PaysyncError, UsageError } from '../../errors.js';
import { describeFindings, type Findings } from '../../probe/findings.js';
import { recordProbe, type FindingChange } from '../../probe/findings-store.js';
import { createProbeClient } from '../../probe/probe-client.js';
import { probeSource } from '../../probe/probe.js';
import { checkPostgres, createRuntime, type Runtime } from '../../runtime.js';
import { createRateGate } from '../../sync/rate-gate.js';
import { parseCommandArgs } from '../args.js';

const USAGE = 'paysync probe [--source NAME] [--json]';

interface ProbeReport {
  source: string;
  findings: Findings;
  previousProbedAt: string | null;
  changes: FindingChange[];
}

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

/** The probe's client behind the same per-source rate ceiling as the sync (shared across workers). */
function clientFor(runtime: Runtime, source: Source) {
  const { settings } = runtime;
  const gate = createRateGate(runtime.redis, {
    prefix: settings.PAYSYNC_QUEUE_PREFIX,
    source: source.name,
    rps: settings.UPSTREAM_RPS,
  });
  return createProbeClient({
    source,
    timeoutMs: settings.UPSTREAM_TIMEOUT,
    retries: settings.UPSTREAM_RETRIES,
    beforeRequest: () => gate.acquire(),
    log: runtime.log,
  });
}

export async function probeAndRecord(runtime: Runtime, source: Source): Promise<ProbeReport> {
  const findings = await probeSource(clientFor(runtime, source));
  const deps = { redis: runtime.redis, pool: runtime.pool, prefix: runtime.settings.PAYSYNC_QUEUE_PREFIX };
  const { previous, changes } = await recordProbe(deps, source.name, findings);
  return { source: source.name, findings, previousProbedAt: previous?.probedAt ?? null, changes };
}

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
