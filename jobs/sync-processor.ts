/**
 * The BullMQ processor: wires each job name to its use case in src/sync/ (or the pack, or the probe), and
 * turns the one retry table's verdict into BullMQ's terms: what retrying cannot fix becomes an
 * UnrecoverableError (the job fails at once with the reason), what can heal is thrown for BullMQ to retry
 * with backoff. A backfill item whose last attempt fails gets its verdict written in PostgreSQL. While the
 * source's circuit is open (src/sync/circuit.ts) a backfill item waits: it is put back for SYNC_EVERY
 * without spending an attempt, before it starts or when the circuit opens under it.
 */
import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { CircuitOpenError, ConfigError, describeError, isRetryable } from '../src/errors.js';
import { isOutageError } from '../src/sync/circuit.js';
import type { Runtime } from '../src/runtime.js';
import type { WindowReport } from '../src/sync/context.js';
import { backfillItemFailed, runBackfillItem, runTick, summarizeTick } from '../src/sync/run-work.js';
import { runDailyExport } from '../src/reconcile/daily-export.js';
import { probeAndRecord } from '../src/probe/record.js';
import { metrics, recordExportResult } from '../src/ops/metrics.js';
import { tracing, type Attributes } from '../src/telemetry/tracing.js';
import { QUEUE_NAME, type SyncJob, type SyncJobData, type WorkByName, type WorkName } from './queue.js';

const NAMES: ReadonlySet<string> = new Set<WorkName>(['tick', 'window', 'scan', 'export', 'probe']);

/** Narrows a job by its name; a name this worker does not know fails the job at once. */
function asSyncJob(job: Job<SyncJobData>): SyncJob {
  if (!NAMES.has(job.name)) throw new ConfigError(`unknown job name ${job.name}`);
  return job as SyncJob;
}

function sourceOf(runtime: Runtime, name: string) {
  const source = runtime.settings.sources.find((s) => s.name === name);
  if (!source)
    throw new ConfigError(`source ${name} is not configured in this worker (PAYSYNC_SOURCES_FILE)`);
  return source;
}

/**
 * The daily pack: one line per day written. While sync does not cover yesterday yet, the job is put back
 * to run again at `retryAt` (BullMQ's DelayedError: not a failed attempt).
 */
async function runExport(runtime: Runtime, job: Job<SyncJobData>, token?: string): Promise<unknown> {
  const report = await runDailyExport(runtime, runtime.now());
  const written = [...(report.yesterday ? [report.yesterday] : []), ...report.restated];
  for (const r of written) recordExportResult(r.day, r.version, r.state === 'incomplete');
  const line = (r: { day: string; version: number; unchanged: boolean; state: string }) =>
    `${r.day} v${r.version} ${r.state}${r.unchanged ? ' (unchanged)' : ''}`;
  if (!report.retryAt)
    return { yesterday: report.yesterday && line(report.yesterday), restated: report.restated.map(line) };
  await job.moveToDelayed(report.retryAt.getTime(), token);
  throw new DelayedError();
}

/** A probe: records the findings and warns when the service answers an open point differently. */
async function runProbe(runtime: Runtime, data: WorkByName['probe']): Promise<unknown> {
  const report = await probeAndRecord(runtime, sourceOf(runtime, data.source));
  for (const change of report.changes) {
    metrics.onProbeChange(data.source, change.label);
    runtime.log.warn(
      { source: data.source, finding: change.label, before: change.before, after: change.after },
      'the service answers an open point of the interface differently since the last probe',
    );
  }
  return { changes: report.changes.length, requests: report.findings.requests };
}

/**
 * Lets a backfill item start: resolves with the function that ends its turn, or rejects with
 * `NotAdmitted` when the worker is shutting down before the item's turn came (start-worker.ts).
 */
export type Admit = () => Promise<() => void>;

/** The worker closed before a held item's turn: the item goes back to the queue, no attempt spent. */
export class NotAdmitted extends Error {}

async function admitted<T>(
  admit: Admit | undefined,
  job: Job<SyncJobData>,
  token: string | undefined,
  run: () => Promise<T>,
): Promise<T> {
  if (!admit) return run();
  let release: () => void;
  try {
    release = await admit();
  } catch (error) {
    if (!(error instanceof NotAdmitted)) throw error;
    await job.moveToDelayed(Date.now(), token);
    throw new DelayedError();
  }
  try {
    return await run();
  } finally {
    release();
  }
}

function dispatch(
  runtime: Runtime,
  job: SyncJob,
  onWindow: (r: WindowReport) => void,
  token?: string,
  admit?: Admit,
): Promise<unknown> {
  switch (job.name) {
    case 'export':
      return runExport(runtime, job as Job<SyncJobData>, token);
    case 'probe':
      return runProbe(runtime, job.data);
    case 'tick':
      return runTick(runtime.syncContext(sourceOf(runtime, job.data.source), onWindow), job.data.stream).then(
        summarizeTick,
      );
    case 'window':
    case 'scan': {
      const deps = runtime.syncContext(sourceOf(runtime, job.data.source), onWindow);
      return admitted(admit, job as Job<SyncJobData>, token, () => runBackfillItem(deps, job.data));
    }
  }
}

/**
 * Whether a backfill item's failure is the service being down: the circuit refused a request, or a 5xx
 * or lost connection came while the circuit is (now) open. Such an item waits instead of failing.
 */
async function serviceDown(runtime: Runtime, job: SyncJob, error: unknown): Promise<boolean> {
  if (job.name !== 'window' && job.name !== 'scan') return false;
  if (error instanceof CircuitOpenError) return true;
  if (!isOutageError(error)) return false;
  const circuit = runtime.syncContext(sourceOf(runtime, job.data.source)).circuit;
  return circuit ? (await circuit.read()).open : false;
}

/**
 * The attributes of a job's span (BullMQ's `process sync`), after the messaging conventions
 * (`messaging.*`) and paysync's own (`paysync.*`: what the job reads), and the backfill span it links to.
 */
export function jobSpan(job: Job<SyncJobData>): { attributes: Attributes; linkTo?: string } {
  // every job name's data, read as the fields any of them may carry (work.ts)
  const data = job.data as {
    source?: string;
    stream?: string;
    backfillId?: number;
    start?: number;
    end?: number;
    trace?: string;
  };
  const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
  return {
    attributes: {
      'messaging.system': 'bullmq',
      'messaging.operation.type': 'process',
      'messaging.operation.name': 'process',
      'messaging.destination.name': QUEUE_NAME,
      'messaging.message.id': job.id,
      'paysync.job.name': job.name,
      'paysync.job.attempt': job.attemptsMade + 1,
      'paysync.source': data.source,
      'paysync.stream': data.stream,
      'paysync.backfill.id': data.backfillId,
      'paysync.window.start': iso(data.start),
      'paysync.window.end': iso(data.end),
    },
    ...(data.trace ? { linkTo: data.trace } : {}),
  };
}

/** Whether this attempt is the job's last one (BullMQ counts attemptsMade after an attempt fails). */
function lastAttempt(job: Job): boolean {
  return job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
}

/**
 * `admit`: when given, each backfill item waits for its turn there before it runs (the worker holds more
 * items than it runs, and runs as many as its sources' in-flight limits need); ticks, exports and probes
 * never wait.
 */
export function createSyncProcessor(
  runtime: Runtime,
  onWindow: (r: WindowReport) => void = () => undefined,
  admit?: Admit,
) {
  return async (raw: Job<SyncJobData>, token?: string): Promise<unknown> => {
    const traced = tracing();
    if (traced) {
      const span = jobSpan(raw);
      traced.describeJob(span.attributes, span.linkTo);
    }
    let job: SyncJob | null = null;
    try {
      job = asSyncJob(raw);
      if (job.name === 'window' || job.name === 'scan')
        await runtime.syncContext(sourceOf(runtime, job.data.source)).circuit?.before(`backfill ${job.name}`);
      return await dispatch(runtime, job, onWindow, token, admit);
    } catch (error) {
      if (error instanceof DelayedError) throw error; // moved to later on purpose, not a failure
      if (job && (await serviceDown(runtime, job, error))) {
        // the service is down: look again after a tick, without spending an attempt (DelayedError)
        runtime.log.debug(
          { job: raw.id, name: job.name },
          `backfill item waits, the service is down: ${describeError(error)}`,
        );
        await raw.moveToDelayed(Date.now() + runtime.settings.SYNC_EVERY, token);
        throw new DelayedError();
      }
      const retryable = isRetryable(error);
      if ((job?.name === 'window' || job?.name === 'scan') && (!retryable || lastAttempt(job)))
        await backfillItemFailed(runtime.warehouse, job.data, error);
      if (!retryable) throw new UnrecoverableError(describeError(error));
      throw error;
    }
  };
}
