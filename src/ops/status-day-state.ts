/**
 * A calendar day's state on the status page, pure. `final` is shown only when the published pack says
 * final AND the export's own rule (reconcile/pack-state.ts), applied to today's facts, still says final:
 * never a weaker rule than the pack's, and a later reconcile that found a difference takes it back.
 *
 * - out of range: the day ended before live sync starts (SYNC_START), sync does not cover it and it has no
 *   pack: nothing is missing, live sync never meant to read it (a backfill can, if it is wanted).
 * - not synced: the day is over, sync does not cover it, no pack, and no backfill is reading it.
 * - syncing: sync does not cover it yet, but the day is not over or a running backfill is reading it.
 * - provisional: covered, but no pack yet, or the pack (or today's facts) is not final.
 * - final: the published pack is final and still is by the same rule.
 * - incomplete: the latest pack was published before sync covered the day (--allow-incomplete or the
 *   daily export's grace period).
 * - restated after sign-off: finance signed off a version and a later one changed the day's records; it
 *   needs a new sign-off (status-signoffs.ts; it outranks the others, whose reason it keeps).
 * A pack published provisional or final whose day sync no longer covers (a window re-read and failed)
 * shows provisional, with the gap as the reason.
 */
import { describeGaps, type StreamCoverage } from '../reconcile/coverage.js';
import { packState } from '../reconcile/pack-state.js';
import type { PackState } from '../reconcile/manifest.js';

export type DayState =
  'out-of-range' | 'not-synced' | 'syncing' | 'provisional' | 'final' | 'incomplete' | 'restated';

export const DAY_STATE_LABEL: Record<DayState, string> = {
  'out-of-range': 'out of range',
  'not-synced': 'not synced',
  syncing: 'syncing',
  provisional: 'provisional',
  final: 'final',
  incomplete: 'incomplete',
  restated: 'restated after sign-off',
};

export interface PublishedPack {
  version: number;
  state: PackState;
  generatedAt: Date;
  stateReason: string;
}

export interface DayReconcile {
  checkedAt: Date;
  /** Rows with an unexplained difference (MISMATCH_SQL). */
  mismatches: number;
  /** Records those rows leave unexplained (|unexplained| summed over them). */
  unexplained: number;
  quarantined: number;
}

export interface DayStateInput {
  day: string;
  window: { start: Date; end: Date };
  now: Date;
  horizonMs: number;
  coverage: readonly StreamCoverage[];
  openRecords: number;
  pack: PublishedPack | null;
  reconcile: DayReconcile | null;
  /** A running backfill has an open item that reads (part of) this day. */
  backfillReading: boolean;
  /** Where live sync starts (SYNC_START, or its default): days that end by then are out of its range. */
  syncStart: Date;
}

export interface DayVerdict {
  state: DayState;
  reason: string;
}

/** Whether any source and stream has synced part of the day (a gap that does not start at midnight). */
function partlyCovered(input: DayStateInput): boolean {
  return input.coverage.some((c) => !c.gap || c.gap.from.getTime() > input.window.start.getTime());
}

function uncovered(input: DayStateInput, gaps: string): DayVerdict {
  const run = `run \`paysync backfill --from ${input.day} --to ${input.day}\``;
  if (input.now.getTime() < input.window.end.getTime())
    return { state: 'syncing', reason: `the day is not over; not covered yet: ${gaps}` };
  if (input.backfillReading)
    return { state: 'syncing', reason: `a running backfill reads it; not covered yet: ${gaps}` };
  if (input.window.end.getTime() <= input.syncStart.getTime())
    return {
      state: 'out-of-range',
      reason: `before live sync's start (SYNC_START, ${input.syncStart.toISOString()}): not synced, and not meant to be; a backfill reads it if it is wanted`,
    };
  const what = partlyCovered(input) ? 'partly synced' : 'nothing of it synced';
  return { state: 'not-synced', reason: `${what}: ${gaps} not covered; ${run}` };
}

export function dayState(input: DayStateInput): DayVerdict {
  const gaps = describeGaps(input.coverage);
  const live = packState({
    day: input.day,
    gaps,
    openRecords: input.openRecords,
    horizonPassed: input.now.getTime() > input.window.end.getTime() + input.horizonMs,
    reconcile: input.reconcile && {
      checkedAt: input.reconcile.checkedAt.toISOString(),
      mismatches: input.reconcile.mismatches,
    },
  });
  const pack = input.pack;
  if (!pack) {
    if (gaps) return uncovered(input, gaps);
    const next =
      live.state === 'final' ? 'it would be published final' : `not final yet: ${live.stateReason}`;
    return { state: 'provisional', reason: `synced, no pack published yet (${next})` };
  }
  const v = `pack v${pack.version}`;
  if (pack.state === 'incomplete') {
    const now = gaps ? `still not covered: ${gaps}` : 'sync covers it now: the next daily export restates it';
    return { state: 'incomplete', reason: `${v} was published before sync covered the day; ${now}` };
  }
  if (pack.state === 'final' && live.state === 'final')
    return { state: 'final', reason: `${v}: ${live.stateReason}` };
  if (pack.state === 'final')
    return {
      state: 'provisional',
      reason: `${v} was published final, but no longer is: ${live.stateReason}`,
    };
  if (live.state === 'final')
    return {
      state: 'provisional',
      reason: `${v} is provisional; it is final now, and the next export publishes it final`,
    };
  return { state: 'provisional', reason: `${v}: ${live.stateReason}` };
}

/** The reconcile result in words: matched, explained by N quarantined, N unexplained, not reconciled. */
export function reconcileLabel(r: DayReconcile | null): string {
  if (!r) return 'not reconciled';
  if (r.mismatches > 0)
    return r.unexplained > 0
      ? `${r.unexplained} unexplained`
      : `amounts differ in ${r.mismatches} status${r.mismatches === 1 ? '' : 'es'}`;
  if (r.quarantined > 0) return `explained by ${r.quarantined} quarantined`;
  return 'matched';
}
