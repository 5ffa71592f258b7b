/**
 * The BullMQ processor: wires a job to the sync core. A failure retrying cannot fix (401, 403, 400, a
 * source missing from the settings) becomes an UnrecoverableError: the job fails at once with the
 * service's message and no checkpoint moves.
 */
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import {
  ConfigError,
  WindowIncompleteError,
  describeError,
  isRetryable,
  PaysyncError,
} from '../src/errors.js';
import type { Runtime } from '../src/runtime.js';
import { organisationOf, tickPayments, tickTransfers } from '../src/sync/tick.js';
import { runPaymentsWindow } from '../src/sync/window-run.js';
import { runTransfers } from '../src/sync/transfers-run.js';
import type { WindowReport } from '../src/sync/context.js';
import { runDailyExport } from '../src/reconcile/daily-export.js';
import { probeAndRecord } from '../src/probe/record.js';
import { metrics, recordExportResult } from '../src/ops/metrics.js';
import { windowKey } from '../src/sync/checkpoints.js';
import type { ExportJob, ProbeJob, SyncJobData, TickJob, WindowJob } from './queue.js';

function sourceOf(runtime: Runtime, name: string) {
  const source = runtime.settings.sources.find((s) => s.name === name);
  if (!source)
    throw new ConfigError(`source ${name} is not configured in this worker (PAYSYNC_SOURCES_FILE)`);
  return source;
}

async function runJob(
  runtime: Runtime,
  job: Job<SyncJobData>,
  onWindow: (r: WindowReport) => void,
): Promise<unknown> {
  const data = job.data as Exclude<SyncJobData, ExportJob | ProbeJob>;
  const deps = runtime.syncContext(sourceOf(runtime, data.source), onWindow);
  if (job.name === 'tick') {
    return data.stream === 'payments' ? summarizeTick(await tickPayments(deps)) : await tickTransfers(deps);
  }
  if (job.name === 'window') {
    const w = data as WindowJob;
    const key = windowKey(new Date(w.start), new Date(w.end));
    await runtime.checkpoints.markWindowOpen(w.source, 'payments', key);
    try {
      const result = await runPaymentsWindow(
        deps,
        { start: new Date(w.start), end: new Date(w.end) },
        'backfill',
      );
      if (result.outcome !== 'complete')
        throw new WindowIncompleteError(`window ${key} incomplete: ${result.detail}`);
      return { records: result.records, rejects: result.rejects, pages: result.pages };
    } finally {
      await runtime.checkpoints.markWindowClosed(w.source, 'payments', key);
    }
  }
  if (job.name === 'scan') {
    const organizationId = await organisationOf(deps); // the interface gives transfers none
    const result = await runTransfers(deps, { mode: 'full', stopBefore: null, organizationId });
    if (result.outcome !== 'complete')
      throw new WindowIncompleteError(`transfers scan incomplete: ${result.detail}`);
    return { records: result.records, rejects: result.rejects, pages: result.pages };
  }
  throw new ConfigError(`unknown job name ${job.name}`);
}

function summarizeTick(report: Awaited<ReturnType<typeof tickPayments>>) {
  return {
    windows: report.windows.length,
    revisits: report.revisits.length,
    records: [...report.windows, ...report.revisits].reduce((n, w) => n + w.records, 0),
    incomplete: [...report.windows, ...report.revisits].filter((w) => w.outcome !== 'complete').length,
    checkpoint: report.checkpoint?.toISOString() ?? null,
  };
}

/**
 * The daily pack: one line per day written; what retrying cannot fix fails the job at once. While sync
 * does not cover yesterday yet, the job is put back to run again at `retryAt` (not a failed attempt).
 */
async function runExportJob(runtime: Runtime, job: Job<SyncJobData>, token?: string): Promise<unknown> {
  let retryAt: Date | null = null;
  try {
    const report = await runDailyExport(runtime);
    const written = [...(report.yesterday ? [report.yesterday] : []), ...report.restated];
    for (const r of written) recordExportResult(r.day, r.version, r.state === 'incomplete');
    const line = (r: { day: string; version: number; unchanged: boolean; state: string }) =>
      `${r.day} v${r.version} ${r.state}${r.unchanged ? ' (unchanged)' : ''}`;
    retryAt = report.retryAt;
    if (!retryAt)
      return { yesterday: report.yesterday && line(report.yesterday), restated: report.restated.map(line) };
  } catch (error) {
    if (!isRetryable(error)) throw new UnrecoverableError(describeError(error));
    throw error;
  }
  await job.moveToDelayed(retryAt.getTime(), token);
  throw new DelayedError();
}

/** A probe job: records the findings and warns when the service answers an open point differently. */
async function runProbeJob(runtime: Runtime, sourceName: string): Promise<unknown> {
  try {
    const report = await probeAndRecord(runtime, sourceOf(runtime, sourceName));
    for (const change of report.changes) {
      metrics.onProbeChange(sourceName, change.label);
      runtime.log.warn(
        { source: sourceName, finding: change.label, before: change.before, after: change.after },
        'the service answers an open point of the interface differently since the last probe',
      );
    }
    return { changes: report.changes.length, requests: report.findings.requests };
  } catch (error) {
    if (!isRetryable(error)) throw new UnrecoverableError(describeError(error));
    throw error;
  }
}

export function createSyncProcessor(runtime: Runtime, onWindow: (r: WindowReport) => void = () => undefined) {
  return async (job: Job<SyncJobData>, token?: string): Promise<unknown> => {
    if (job.name === 'export') return runExportJob(runtime, job, token);
    if (job.name === 'probe') return runProbeJob(runtime, (job.data as ProbeJob).source);
    const { source, stream } = job.data as TickJob;
    try {
      const result = await runJob(runtime, job, onWindow);
      if (job.name === 'tick') await runtime.checkpoints.recordSuccess(source, stream, new Date());
      return result;
    } catch (error) {
      const code = error instanceof PaysyncError ? error.code : 'ERROR';
      await runtime.checkpoints
        .recordError(source, stream, { message: describeError(error), code })
        .catch(() => undefined);
      if (!isRetryable(error)) throw new UnrecoverableError(describeError(error));
      throw error;
    }
  };
}
