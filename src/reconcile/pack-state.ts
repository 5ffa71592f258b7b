/**
 * The one rule for a day's state (manifest.ts PackState), pure: `incomplete` while sync does not cover the
 * day, else `final` only when every record is final (or the settle horizon passed) and the last reconcile
 * found no unexplained difference; `provisional` otherwise, with the reason. The export writes it into
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
}

export function packState(f: DayFacts): { state: PackState; stateReason: string } {
  if (f.gaps) return { state: 'incomplete', stateReason: `not covered by sync: ${f.gaps}` };
  const notYet: string[] = [];
  if (f.openRecords > 0 && !f.horizonPassed)
    notYet.push(`${f.openRecords} record(s) not yet in a final state`);
  if (!f.reconcile) notYet.push(`not reconciled yet: run \`paysync reconcile --day ${f.day}\``);
  else if (f.reconcile.mismatches > 0) {
    notYet.push(
      `the last reconcile (${f.reconcile.checkedAt}) found ${f.reconcile.mismatches} row(s) with unexplained differences`,
    );
  }
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
