/**
 * Backfill planning (pure): the windows of an inclusive local day range, one item per source × local day
 * for payments, and one full scan per source for transfers (they have no date filter). Each item has a
 * deterministic key, so the same range plans the same items. A backfill never touches the live checkpoint.
 */
import type { Settings, Source } from '../config/settings.js';
import type { Stream } from '../upstream/schemas.js';
import { dayWindows } from './windows.js';
import { scanItemKey, windowItemKey, type BackfillWork } from './work.js';

export interface PlannedJob {
  /** The item's deterministic key (the job id of a backfill not recorded in PostgreSQL). */
  id: string;
  name: 'window' | 'scan';
  data: BackfillWork;
  label: string;
}

export function planBackfill(
  settings: Settings,
  sources: readonly Source[],
  fromDay: string,
  toDay: string,
  streams: readonly Stream[],
): PlannedJob[] {
  const windows = dayWindows(fromDay, toDay, settings.REPORT_TIMEZONE);
  const jobs: PlannedJob[] = [];
  for (const source of sources) {
    if (streams.includes('payments')) {
      for (const w of windows) {
        const start = w.start.getTime();
        const end = w.end.getTime();
        jobs.push({
          id: windowItemKey(source.name, start, end),
          name: 'window',
          data: { source: source.name, stream: 'payments', start, end, kind: 'backfill' },
          label: `${source.name} payments ${w.start.toISOString()} → ${w.end.toISOString()}`,
        });
      }
    }
    if (streams.includes('transfers')) {
      jobs.push({
        id: scanItemKey(source.name),
        name: 'scan',
        data: { source: source.name, stream: 'transfers', kind: 'backfill' },
        label: `${source.name} transfers full scan`,
      });
    }
  }
  return jobs;
}

/** Requests a plan needs at least: per window, one page per `pageSize` expected records plus the empty last page. */
export function estimateRequests(
  jobs: readonly PlannedJob[],
  expectedPerDay: number | null,
  pageSize: number,
): number {
  const perWindow = expectedPerDay === null ? 2 : Math.ceil(expectedPerDay / pageSize) + 1;
  return jobs.reduce((n, j) => n + (j.name === 'window' ? perWindow : perWindow * 4), 0);
}
