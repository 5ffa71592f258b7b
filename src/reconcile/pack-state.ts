/**
 * The one rule for a day's state (manifest.ts PackState), pure: `incomplete` while sync does not cover the
 * day, else `final` only when every record is final (or the settle horizon passed) and the last reconcile
 * found no unexplained difference, and no suspiciously empty stream waits for its second read;
 * `provisional` otherwise, with the reason. The export writes it into
 * each pack; the status page applies it to today's facts, so the two can never mean different things.
 */
import type { PackState } from './manifest.js';

export interface DayFacts {
  day: string;
  /** describeGaps() of the day's coverage: empty when sync covers the day for every source and stream. */
  gaps: string;
  /** Records of the day not yet in a final state (OPEN_RECORDS_SQL). */
  openRecords: number;
  /** Whether SETTLE_HORIZON has passed since the day ended. */
  horizonPassed: boolean;
  /** The day's latest reconcile, or null when it was never reconciled. */
  reconcile: { checkedAt: string; mismatches: number } | null;
  /** Suspiciously empty streams not confirmed empty yet (empty-days.ts), one reason each. */
  emptyUnconfirmed?: readonly string[];
  /**
   * `now` (default): the reasons speak of the present (the status page). `written`: they go into a
   * version's own files, which never change, so they say what was true then and where the later facts are.
   */
  wording?: 'now' | 'written';
}

const NOT_RECONCILED = {
  now: (day: string) => `not reconciled yet: run \`paysync reconcile --day ${day}\``,
  written: () =>
    "not reconciled when this version was written (the day's latest reconcile result: the day's top manifest.json, `paysync status`, reporting.reconcile_results)",
};

export function packState(f: DayFacts): { state: PackState; stateReason: string } {
  if (f.gaps) return { state: 'incomplete', stateReason: `not covered by sync: ${f.gaps}` };
  const notYet: string[] = [];
  if (f.openRecords > 0 && !f.horizonPassed)
    notYet.push(`${f.openRecords} record(s) not yet in a final state`);
  if (!f.reconcile) notYet.push(NOT_RECONCILED[f.wording ?? 'now'](f.day));
  else if (f.reconcile.mismatches > 0) {
    notYet.push(
      `the last reconcile (${f.reconcile.checkedAt}) found ${f.reconcile.mismatches} row(s) with unexplained differences`,
    );
  }
  notYet.push(...(f.emptyUnconfirmed ?? []));
  if (notYet.length > 0) return { state: 'provisional', stateReason: notYet.join('; ') };
  const settled =
    f.openRecords === 0
      ? 'every record is in a final state'
      : `the settle horizon passed with ${f.openRecords} record(s) not final`;
  return {
    state: 'final',
    stateReason: `covered by sync, ${settled}, reconciled with no unexplained difference`,
  };
}
