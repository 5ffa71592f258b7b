/**
 * Backfills: the windows of an inclusive local day range, enqueued as window jobs with deterministic ids
 * (a window already queued or running is not queued twice; a finished one is re-queued, so re-running a
 * range re-reads it harmlessly). Transfers have no date filter: their backfill is one full scan.
 * A backfill never touches the live checkpoint.
 */
import type { Job, Queue } from 'bullmq';
import type { Settings, Source } from '../config/settings.js';
import { PRIORITY, RETRY, scanJobId, windowJobId, type SyncJobData } from '../../jobs/queue.js';
import type { Stream } from '../upstream/schemas.js';
import { dayWindows } from './windows.js';

export interface PlannedJob {
  id: string;
  name: 'window' | 'scan';
  data: SyncJobData;
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
          id: windowJobId(source.name, start, end),
          name: 'window',
          data: { source: source.name, stream: 'payments', start, end, kind: 'backfill' },
          label: `${source.name} payments ${w.start.toISOString()} → ${w.end.toISOString()}`,
        });
      }
    }
    if (streams.includes('transfers')) {
      jobs.push({
        id: scanJobId(source.name),
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

/** Adds the planned jobs; a job already waiting or running is left as it is, a finished one is replaced. */
export async function enqueueBackfill(
  queue: Queue<SyncJobData>,
  jobs: readonly PlannedJob[],
): Promise<{ added: number; alreadyQueued: number }> {
  let added = 0;
  let alreadyQueued = 0;
  for (const planned of jobs) {
    const existing: Job<SyncJobData> | undefined = await queue.getJob(planned.id);
    if (existing) {
      const state = await existing.getState();
      if (state !== 'completed' && state !== 'failed' && state !== 'unknown') {
        alreadyQueued += 1;
        continue;
      }
      await existing.remove().catch(() => undefined); // a finished run of the same window: replace it
    }
    await queue.add(planned.name, planned.data, { jobId: planned.id, priority: PRIORITY.backfill, ...RETRY });
    added += 1;
  }
  return { added, alreadyQueued };
}

export interface BackfillProgress {
  total: number;
  done: number;
  failed: Array<{ id: string; reason: string }>;
  records: number;
}

export async function backfillProgress(
  queue: Queue<SyncJobData>,
  jobs: readonly PlannedJob[],
): Promise<BackfillProgress> {
  const progress: BackfillProgress = { total: jobs.length, done: 0, failed: [], records: 0 };
  for (const planned of jobs) {
    const job = await queue.getJob(planned.id);
    if (!job) continue;
    const state = await job.getState();
    if (state === 'completed') {
      progress.done += 1;
      progress.records += Number((job.returnvalue as { records?: number } | null)?.records ?? 0);
    } else if (state === 'failed') {
      progress.failed.push({ id: planned.label, reason: job.failedReason ?? 'failed' });
    }
  }
  return progress;
}
