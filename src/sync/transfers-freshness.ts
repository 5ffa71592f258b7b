/**
 * How stale a source's transfers may be, in words, for `status` (null: every tick reads them current).
 * Only an unknown-order list with TRANSFERS_UNORDERED_SCAN_EVERY set can be stale between its full scans.
 */
import type { Settings } from '../config/settings.js';
import { humanDuration } from '../config/duration.js';
import { transfersStaleness } from './transfers-plan.js';
import type { TransferMemory } from './transfer-state.js';

export async function transfersFreshness(
  memory: Pick<TransferMemory, 'list'>,
  source: string,
  settings: Pick<Settings, 'TRANSFERS_UNORDERED_SCAN_EVERY' | 'SYNC_EVERY'>,
): Promise<string | null> {
  const list = await memory.list(source);
  const stale = transfersStaleness(list, settings);
  if (stale === null) return null;
  return (
    `${source} transfers may be up to ${humanDuration(stale)} stale: the service lists them in no known order ` +
    `and TRANSFERS_UNORDERED_SCAN_EVERY allows a full scan only that often (set it to 0s for every tick)`
  );
}
