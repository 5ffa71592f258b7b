/**
 * `paysync status [--json]`: per source and stream, its health phase (status-health.ts: the status page's
 * and /metrics' too), where sync stands and what needs attention, and each recent day's last reconcile.
 * Exit 0 healthy; 1 needs attention (the reasons listed); 2 cannot tell (the database is missing or not
 * migrated, PostgreSQL or Redis unreachable).
 */
import { loadSettings, requireSources } from '../../config/settings.js';
import { recentReconcileResults, type ReconcileRow } from '../../ops/reconcile-results.js';
import { createRuntime, requireMigrated } from '../../runtime.js';
import { humanDuration } from '../../config/duration.js';
import { createQueue } from '../../../jobs/queue.js';
import { gatherStatus, type StreamStatus } from '../../ops/status-data.js';
import { PHASE_TODO, streamHealth, worstPhase } from '../../ops/status-health.js';
import { renderFinanceAttention, restatedAfterSignoff } from '../../ops/status-signoffs.js';
import { describeOpenCircuit, readCircuit, type CircuitState } from '../../sync/circuit.js';
import { recordChanges, recordChangesJson, renderRecordChanges } from '../../ops/status-fields.js';
import { transfersFreshness } from '../../sync/transfers-freshness.js';
import { listBackfills, type BackfillSummary } from '../../warehouse/backfill-store.js';
import { PgTransferMemory } from '../../warehouse/transfer-positions.js';
import { oneLine } from '../../terminal-text.js';
import {
  byReason,
  failingReasonLines,
  failingWindows,
  renderFailingReasons,
} from '../../ops/window-failures.js';
import { blockedDayLine, blockedDays, renderBlockedDays } from '../../ops/blocked-days.js';
import { parseCommandArgs } from '../args.js';

type Row = StreamStatus;

export async function run(argv: string[]): Promise<number> {
  const args = parseCommandArgs(argv, { json: { type: 'boolean' } }, 'paysync status [--json]');
  const settings = loadSettings();
  const sources = requireSources(settings);
  const runtime = await createRuntime(settings, { name: 'paysync-status' });
  try {
    await requireMigrated(runtime.pool, settings.DATABASE_URL);
    const queue = createQueue(runtime.redis, settings.PAYSYNC_QUEUE_PREFIX);
    const status = await gatherStatus({
      pool: runtime.pool,
      checkpoints: runtime.checkpoints,
      sources,
      settings,
      queue,
      circuits: (name) => readCircuit(runtime.redis, settings.PAYSYNC_QUEUE_PREFIX, name),
    }).finally(() => queue.close());
    const { queue: counts, streams: rows } = status;
    const reconcile = await recentReconcileResults(runtime.pool, RECONCILE_DAYS);
    const backfills = await listBackfills(runtime.pool, { running: true });
    const memory = new PgTransferMemory(runtime.pool);
    const staleness = (
      await Promise.all(sources.map((s) => transfersFreshness(memory, s.name, settings)))
    ).filter((line): line is string => line !== null);
    const failing = byReason(await failingWindows(runtime.pool));
    const blocked = await blockedDays(runtime.pool, settings.REPORT_TIMEZONE, settings.BLOCKED_AFTER);
    const attention = [
      ...downReasons(status.circuits ?? []),
      ...reasons(rows, reconcile),
      ...failingReasonLines(failing),
      ...blocked.map(blockedDayLine),
      ...backfillReasons(backfills),
    ];
    // finance's, listed apart: it does not change ops' exit code (`signoff --list --pending` does, for finance)
    const finance = await restatedAfterSignoff(runtime.pool);
    // an announcement, not a failure: it does not change the exit code either
    const changes = await recordChanges(runtime.pool);
    if (args.json) {
      const body = {
        phase: worstPhase(rows.map((r) => streamHealth(r).phase)),
        queue: counts,
        streams: rows.map((r) => ({ ...r, health: streamHealth(r) })),
        circuits: status.circuits,
        backfills,
        transfersStaleness: staleness,
        failingWindows: failing,
        blockedDays: blocked,
        reconcile,
        attention,
        finance: finance.map((d) => ({
          day: d.day,
          state: d.state,
          version: d.version,
          signed: d.signed,
          summary: d.summary,
        })),
        recordChanges: recordChangesJson(changes),
      };
      process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
    } else
      process.stdout.write(
        renderTable(rows, counts) +
          staleness.map((line) => `${line}\n`).join('') +
          renderFailingReasons(failing, oneLine) +
          renderBlockedDays(blocked, oneLine) +
          renderBackfills(backfills) +
          renderReconcile(reconcile, attention) +
          renderFinanceAttention(finance) +
          renderRecordChanges(changes, oneLine),
      );
    return attention.length > 0 ? 1 : 0;
  } finally {
    await runtime.close();
  }
}

function renderTable(rows: Row[], counts: Record<string, number>): string {
  const header = [
    'source',
    'stream',
    'phase',
    'checkpoint',
    'lag',
    'open',
    'incomplete',
    'rejects',
    'last success',
    'last error',
  ];
  const body = rows.map((r) => [
    r.source,
    r.stream,
    streamHealth(r).phase,
    r.checkpoint ?? 'none yet',
    r.lagSeconds === null
      ? '-'
      : `${humanDuration(r.lagSeconds * 1000)}${r.lagFrom === 'sync start' ? ' (since the sync start)' : ''}`,
    String(r.openWindows.length),
    String(r.incompleteWindows.length),
    String(r.openRejects),
    r.lastSuccessAt ?? '-',
    oneLine(r.lastError ?? '-'), // the service's words: one line, whatever they hold
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  const out = [line(header), ...body.map(line)];
  for (const r of rows)
    for (const w of r.incompleteWindows)
      out.push(`  incomplete ${r.source}/${r.stream} ${w.window}: ${oneLine(w.detail)}`);
  out.push(
    '',
    `queue: ${Object.entries(counts)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  return `${out.join('\n')}\n`;
}

const RECONCILE_DAYS = 7;

/** What needs attention, one line each (empty: healthy): each stream not healthy, with what to do. */
function reasons(rows: Row[], reconcile: ReconcileRow[]): string[] {
  const out: string[] = [];
  for (const r of rows) {
    const h = streamHealth(r);
    if (h.phase !== 'healthy')
      out.push(`${r.source}/${oneLine(h.reason)}${PHASE_TODO[h.phase] ? ` (${PHASE_TODO[h.phase]})` : ''}`);
  }
  for (const r of reconcile) {
    if (r.mismatches > 0)
      out.push(
        `${r.day} ${r.source}/${r.stream}: last reconcile found ${r.mismatches} status(es) with unexplained differences`,
      );
  }
  return out;
}

/**
 * A source whose service is down (its circuit open): paysync waits and probes by itself; the line names
 * the upstream problem so ops can take it to the service's owners.
 */
function downReasons(circuits: CircuitState[]): string[] {
  return circuits
    .filter((c) => c.open)
    .map(
      (c) =>
        `${c.source}: the service is down, ${oneLine(describeOpenCircuit(c))}; paysync resumes by itself ` +
        'when it answers (docs/operations.md#the-service-is-down)',
    );
}

/** A running backfill with failed items needs a person: those windows will not be read again by themselves. */
function backfillReasons(backfills: BackfillSummary[]): string[] {
  return backfills
    .filter((b) => b.failed > 0)
    .map((b) => `backfill #${b.id}: ${b.failed} item(s) failed (see \`paysync backfill --list\`)`);
}

function renderBackfills(backfills: BackfillSummary[]): string {
  const out = ['', 'running backfills:'];
  if (backfills.length === 0) out.push('  none');
  for (const b of backfills) {
    const left = b.total - b.done - b.failed - b.cancelled;
    out.push(
      `  #${b.id} ${b.fromDay} → ${b.toDay} (${b.streams.join(', ')}): ${b.done}/${b.total} done, ` +
        `${b.failed} failed, ${b.running} running, ${left} left; ${b.records} records`,
    );
  }
  return `${out.join('\n')}\n`;
}

function renderReconcile(rows: ReconcileRow[], attention: string[]): string {
  const out = ['', `last reconcile per day (last ${RECONCILE_DAYS} days):`];
  if (rows.length === 0) out.push('  none yet');
  for (const r of rows) {
    const verdict = r.mismatches === 0 ? 'match' : `${r.mismatches} status(es) with unexplained differences`;
    out.push(
      `  ${r.day} ${r.source}/${r.stream}: service ${r.service}, warehouse ${r.warehouse}, quarantined ${r.quarantined}: ${verdict} (${r.checkedAt.toISOString()})`,
    );
  }
  out.push(
    '',
    attention.length === 0 ? 'healthy' : `needs attention:\n${attention.map((a) => `  ${a}`).join('\n')}`,
  );
  return `${out.join('\n')}\n`;
}
