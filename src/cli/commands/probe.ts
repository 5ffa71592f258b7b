/**
 * `paysync probe [--source NAME] [--json]`: measures how each source answers the interface's open points,
 * prints the findings, stores them (Redis and reporting.probe_findings) and flags what changed since the
 * last probe; then lists the changes in the shape of the service's records nobody has acknowledged yet.
 * Exit 0 when every source was probed (a change is news, not a failure), 1 when a probe could not
 * complete (e.g. a rejected key), 2 for bad usage or configuration.
 *
 * `paysync probe --ack FIELD [--stream STREAM] [--by NAME]` acknowledges the sightings of FIELD (probing
 * nothing): recorded with who (NAME, or the operating-system user) and when; exit 1 when FIELD has none
 * to acknowledge.
 */
import { userInfo } from 'node:os';
import type { Source } from '../../config/settings.js';
import { loadSettings, requireSources } from '../../config/settings.js';
import { describeError, PaysyncError, UsageError } from '../../errors.js';
import { describeFindings } from '../../probe/findings.js';
import { probeAndRecord, type ProbeReport } from '../../probe/record.js';
import { checkPostgres, createRuntime } from '../../runtime.js';
import { describeSighting, recordChanges, renderRecordChanges } from '../../ops/status-fields.js';
import { oneLine } from '../../terminal-text.js';
import { STREAMS } from '../../upstream/schemas.js';
import { acknowledgeField } from '../../warehouse/field-sightings.js';
import { parseCommandArgs } from '../args.js';

const USAGE =
  'paysync probe [--source NAME] [--json] | paysync probe --ack FIELD [--stream payments|transfers] [--by NAME]';

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

const OPTIONS = {
  source: { type: 'string' },
  json: { type: 'boolean' },
  ack: { type: 'string' },
  stream: { type: 'string' },
  by: { type: 'string' },
} as const;

/** Who acknowledges: --by NAME, or the operating-system user running the command. */
function whoAcknowledges(by: string | undefined): string {
  if (by !== undefined) {
    if (by.trim() === '') throw new UsageError('--by needs a name');
    return by;
  }
  try {
    return userInfo().username;
  } catch {
    throw new UsageError('--by NAME is needed: the operating-system user cannot be read here');
  }
}

async function acknowledge(
  field: string,
  stream: string | undefined,
  by: string | undefined,
): Promise<number> {
  if (field === '') throw new UsageError(`--ack needs a field name; usage: ${USAGE}`);
  if (stream !== undefined && !(STREAMS as readonly string[]).includes(stream))
    throw new UsageError(`--stream must be one of ${STREAMS.join(', ')} (got "${stream}")`);
  const who = whoAcknowledges(by);
  const settings = loadSettings();
  const runtime = await createRuntime(settings, { name: 'paysync-probe' });
  try {
    await checkPostgres(runtime.pool, settings.DATABASE_URL);
    const done = await acknowledgeField(runtime.pool, field, who, stream);
    if (done.length === 0) {
      const where = stream === undefined ? '' : ` on ${stream}`;
      process.stderr.write(
        `paysync probe: no unacknowledged change of field ${oneLine(JSON.stringify(field))}${where}; ` +
          'see `paysync status` for the ones there are\n',
      );
      return 1;
    }
    for (const s of done)
      process.stdout.write(
        `acknowledged by ${oneLine(who)} at ${s.acknowledgedAt?.toISOString()}: ${oneLine(describeSighting(s))}\n`,
      );
    return 0;
  } finally {
    await runtime.close();
  }
}

export async function run(argv: string[]): Promise<number> {
  const args = parseCommandArgs(argv, OPTIONS, USAGE);
  if (args.ack !== undefined) return acknowledge(args.ack, args.stream, args.by);
  if (args.stream !== undefined || args.by !== undefined)
    throw new UsageError(`--stream and --by go with --ack FIELD; usage: ${USAGE}`);
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
    if (!args.json) process.stdout.write(renderRecordChanges(await recordChanges(runtime.pool), oneLine));
  } finally {
    await runtime.close();
  }
  if (args.json) process.stdout.write(`${JSON.stringify(reports, null, 2)}\n`);
  return failed ? 1 : 0;
}
