/**
 * Incomplete marks tell the truth: a window recorded incomplete stays marked (and `status` exits 1) only
 * until a later complete read covers it, whoever made that read (a tick, a revisit, a backfill, a retry).
 */
import { parseWindowKey } from './checkpoints.js';
import type { IncompleteMarkers } from './context.js';
import type { Window } from './windows.js';

/** Clears every payments mark whose window lies inside `covered`; returns the marks cleared. */
export async function clearCoveredMarks(
  markers: IncompleteMarkers,
  source: string,
  covered: Window,
): Promise<string[]> {
  const { incompleteWindows } = await markers.get(source, 'payments');
  const cleared: string[] = [];
  for (const { window } of incompleteWindows) {
    const span = parseWindowKey(window);
    if (!span || span.start < covered.start || span.end > covered.end) continue;
    await markers.clearIncomplete(source, 'payments', window);
    cleared.push(window);
  }
  return cleared;
}
