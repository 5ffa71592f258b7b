/**
 * Finance's part of the status views: the days restated after sign-off (their records changed after
 * finance signed off a version, and the new version awaits a sign-off), for `paysync status` (listed under
 * finance's attention, with both versions; ops' exit code is not theirs to turn red: `signoff --list
 * --pending` does that for finance), the metric behind the PaysyncRestatedAfterSignoff alert, and the
 * status page's calendar (a state of its own). The rule is reconcile/signoff-state.ts's.
 */
import type { Pool } from 'pg';
import type { DaySignoff } from '../reconcile/signoff-state.js';
import { signoffStates } from '../reconcile/signoff-store.js';

/** Every day restated after sign-off, oldest first. A warehouse that cannot tell reads as none. */
export async function restatedAfterSignoff(pool: Pool): Promise<DaySignoff[]> {
  const days = await signoffStates(pool, { signedOnly: true }).catch(() => [] as DaySignoff[]);
  return days.filter((d) => d.state === 'restated after sign-off');
}

/** `paysync status`'s section, empty when nothing waits for finance. */
export function renderFinanceAttention(days: readonly DaySignoff[]): string {
  if (days.length === 0) return '';
  const lines = days.map((d) => `  ${d.day}: ${d.summary}`);
  return `\nfinance's attention (\`paysync signoff --list --pending\`):\n${lines.join('\n')}\n`;
}
