/**
 * `paysync reconcile --day D --heal` and the daily job: reconcile, and where a difference is one a re-read
 * can fix (a record missing in the warehouse, or held with another status or amount), read that source,
 * stream and day again — the same path as a backfill window or a transfers scan, run here at once rather
 * than queued behind backfills — then reconcile again; up to `attempts` re-reads, with backoff between
 * them. Only a difference that survives is reported.
 *
 * Healing never deletes or rewrites a warehouse record the service no longer lists: such a record is
 * flagged (`missing_at_source_since`, sql/015), kept and reported, because finance must see it, not lose
 * it. The flag is cleared when the service lists the record again. The whole run holds the day's lease.
 */
import type { Source } from '../config/settings.js';
import type { Runtime } from '../sync/services.js';
import { runTransfers } from '../sync/transfers-run.js';
import { runPaymentsWindow } from '../sync/window-run.js';
import { dayWindow, type Window } from '../sync/windows.js';
import type { StreamName } from './day-records.js';
import { quarantineImpossibleRows } from './heal-impossible.js';
import type { RecordDifference } from './record-diff.js';
import { withReconcileLease, type LeaseOptions } from './reconcile-lock.js';
import { reconcileUnlocked, refreshPack, type ReconcileOptions, type ReconcileResult } from './reconcile.js';

export interface HealOptions extends ReconcileOptions, LeaseOptions {
  /** Re-reads at most (default 3). */
  attempts?: number;
  /** Wait before the second re-read, doubled each time after (default 5 s). */
  backoffMs?: number;
  /** Progress: each re-read, and each reconcile after it. */
  onStep?: (line: string) => void;
}

export interface HealReport {
  /** The last reconcile: what survives. */
  result: ReconcileResult;
  /** The first reconcile, before any re-read. */
  first: ReconcileResult;
  /** Re-reads made. */
  rereads: number;
  /** Records flagged missing at the source by this run (kept in the warehouse). */
  flagged: number;
}

/** Sources and streams a re-read can help: a record missing in the warehouse, or different in it. */
export function rereadTargets(
  differences: readonly RecordDifference[],
): Array<{ source: string; stream: StreamName }> {
  const keys = new Set(
    differences
      .filter((d) => d.kind === 'missing_in_warehouse' || d.kind === 'different')
      .map((d) => `${d.source}\u0000${d.stream}`),
  );
  return [...keys].sort().map((k) => {
    const [source, stream] = k.split('\u0000') as [string, StreamName];
    return { source, stream };
  });
}

export async function reconcileAndHeal(
  runtime: Runtime,
  day: string,
  options: HealOptions = {},
): Promise<HealReport> {
  return withReconcileLease(runtime.pool, day, () => healLocked(runtime, day, options), options);
}

async function healLocked(runtime: Runtime, day: string, options: HealOptions): Promise<HealReport> {
  const attempts = options.attempts ?? 3;
  const backoffMs = options.backoffMs ?? 5_000;
  const say = options.onStep ?? (() => undefined);
  const w = dayWindow(day, runtime.settings.REPORT_TIMEZONE);
  await unfreeze(runtime, day, w, say);
  const first = await reconcileUnlocked(runtime, day);
  let result = first;
  let rereads = 0;
  for (let attempt = 1; attempt <= attempts && result.mismatches > 0; attempt++) {
    const targets = rereadTargets(result.differences);
    if (targets.length === 0) break; // only records the service no longer lists: a re-read cannot help
    if (attempt > 1) await new Promise((r) => setTimeout(r, backoffMs * 2 ** (attempt - 2)));
    for (const t of targets) {
      const source = runtime.settings.sources.find((s) => s.name === t.source);
      if (!source) continue;
      say(`re-reading ${t.source}/${t.stream} ${day} (attempt ${attempt} of ${attempts})`);
      say(`  ${await reread(runtime, source, t.stream, w)}`);
    }
    rereads = attempt;
    result = await reconcileUnlocked(runtime, day);
    say(
      `reconcile again: ${result.mismatches === 0 ? 'no unexplained difference' : `${result.mismatches} row(s) still differ`}`,
    );
  }
  const flagged = await flagMissingAtSource(runtime, w, result.differences);
  if (options.refreshPack !== false) await refreshPack(runtime, day, options.now);
  return { result, first, rereads, flagged };
}

/**
 * Rows holding a time no record can have are moved to the rejects and their day read again at once
 * (heal-impossible.ts): the forward-only upsert would otherwise refuse the service's true copy for ever.
 */
async function unfreeze(
  runtime: Runtime,
  day: string,
  w: Window,
  say: (line: string) => void,
): Promise<void> {
  const latest = new Date(runtime.now().getTime() + runtime.settings.FUTURE_TOLERANCE);
  for (const source of runtime.settings.sources) {
    for (const stream of ['payments', 'transfers'] as const) {
      const moved = await quarantineImpossibleRows(runtime.pool, source.name, stream, w, latest);
      if (moved === 0) continue;
      say(
        `${source.name}/${stream} ${day}: ${moved} row(s) held an impossible time; moved to the rejects, reading again`,
      );
      say(`  ${await reread(runtime, source, stream, w)}`);
    }
  }
}

/** One re-read, as a backfill reads: the payments day as a window, or the transfer list whole. */
async function reread(runtime: Runtime, source: Source, stream: StreamName, w: Window): Promise<string> {
  const deps = runtime.syncContext(source);
  if (stream === 'payments') {
    const r = await runPaymentsWindow(deps, w, 'backfill');
    return `${r.records} payments read, ${r.outcome}${r.outcome === 'complete' ? '' : `: ${r.detail}`}`;
  }
  const organizationId = await deps.warehouse.organisationOf(source.name); // transfers carry none
  const r = await runTransfers(deps, { mode: 'full', stopBefore: null, organizationId });
  return `${r.records} transfers read, ${r.outcome}${r.detail ? `: ${r.detail}` : ''}`;
}

const TABLES: Record<StreamName, string> = {
  payments: 'reporting.payments',
  transfers: 'reporting.transfers',
};

/**
 * Flags the day's records the service does not list (first time only: the flag keeps the day it was first
 * seen missing) and clears the flag of the day's records it lists again. Returns how many were newly flagged.
 */
async function flagMissingAtSource(
  runtime: Runtime,
  w: Window,
  differences: readonly RecordDifference[],
): Promise<number> {
  let flagged = 0;
  for (const source of runtime.settings.sources) {
    for (const stream of ['payments', 'transfers'] as const) {
      // a count without a record (counted-copies.ts) names no row to flag; a NULL would also make
      // `id <> ALL(...)` below unknown for every row, and no flag would ever clear
      const missing = differences
        .filter((d) => d.kind === 'missing_at_source' && d.source === source.name && d.stream === stream)
        .flatMap((d) => (d.id === null ? [] : [d.id]));
      const table = TABLES[stream];
      const set = await runtime.pool.query(
        `UPDATE ${table} SET missing_at_source_since = now()
          WHERE source = $1 AND id = ANY($2::text[]) AND missing_at_source_since IS NULL`,
        [source.name, missing],
      );
      flagged += set.rowCount ?? 0;
      await runtime.pool.query(
        `UPDATE ${table} SET missing_at_source_since = NULL
          WHERE source = $1 AND created_at >= $2 AND created_at < $3
            AND missing_at_source_since IS NOT NULL AND id <> ALL($4::text[])`,
        [source.name, w.start, w.end, missing],
      );
    }
  }
  return flagged;
}
