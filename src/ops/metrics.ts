/**
 * paysync's Prometheus metrics (prom-client), on a registry of their own so tests and several runtimes in
 * one process do not share counters.
 *
 * Two kinds:
 * - event metrics, counted in this process as things happen (requests, windows, records, jobs): hooked
 *   to RuntimeOptions.onResponse, startWorker's onWindow and the worker's job events;
 * - state gauges (lag, open and incomplete windows, last successful tick, the health phase, queue depth),
 *   read from Redis and PostgreSQL at scrape time through status-data, so every worker reports the same
 *   shared truth; the phase is status-health.ts's decision, the one `paysync status` and the page show.
 * Reconcile and export results are recorded by whoever runs them, through `recordReconcileResult` and
 * `recordExportResult`; only the last RESULT_DAYS days are kept as labels (bounded cardinality).
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { WindowReport } from '../sync/context.js';
import type { ExportState } from './export-state.js';
import type { StatusData } from './status-data.js';
import { PHASES, phaseSlug, streamHealth } from './status-health.js';

export const RESULT_DAYS = 14;

/** prom-client default metrics that are gauges despite their `_total` suffix (promtool rejects them). */
const GAUGES_NAMED_TOTAL = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

export interface ResponseInfo {
  endpoint: string;
  status: number | 'network';
  attempt: number;
  ms: number;
}

/** A label set of gauges keyed by day, forgetting the oldest days beyond `keep`. */
class DayGauges {
  private readonly days = new Set<string>();
  constructor(
    private readonly gauges: Gauge<'day'>[],
    private readonly keep: number,
  ) {}
  set(day: string, values: number[]): void {
    this.days.add(day);
    values.forEach((v, i) => this.gauges[i]?.set({ day }, v));
    for (const old of [...this.days].sort().slice(0, Math.max(0, this.days.size - this.keep))) {
      this.days.delete(old);
      for (const g of this.gauges) g.remove({ day: old });
    }
  }
}

export class PaysyncMetrics {
  readonly registry = new Registry();
  private readonly c = buildCollectors(this.registry);
  private readonly reconcile = new DayGauges(
    [this.c.reconcileMismatches, this.c.reconcileAt, this.c.reconcileQuarantined],
    RESULT_DAYS,
  );
  private readonly exports = new DayGauges(
    [this.c.exportVersion, this.c.exportAt, this.c.exportIncomplete],
    RESULT_DAYS,
  );

  private processMetrics = false;

  /**
   * Adds Node's process metrics (CPU, memory, event loop lag) once; the worker turns them on. They keep
   * their standard names (`process_cpu_seconds_total`, `nodejs_eventloop_lag_seconds`, …) without the
   * `paysync_` prefix: stock Node.js dashboards and alerts look for those names, and a prefix would
   * also make names like `nodejs_active_handles_total` (a gauge) fail `promtool check metrics`.
   * prom-client's three gauges named `*_total` are dropped for that reason; their per-type twins without
   * the suffix (`nodejs_active_handles{type}`, …) stay, and sum() of them is the same number.
   */
  withProcessMetrics(): this {
    if (!this.processMetrics) {
      collectDefaultMetrics({ register: this.registry });
      for (const name of GAUGES_NAMED_TOTAL) this.registry.removeSingleMetric(name);
    }
    this.processMetrics = true;
    return this;
  }

  /** RuntimeOptions.onResponse: one call per attempt at the service; attempt > 1 is a retry. */
  readonly onResponse = (source: string, info: ResponseInfo): void => {
    this.c.requests.inc({ source, endpoint: info.endpoint, status: String(info.status) });
    if (info.attempt > 1) this.c.retries.inc({ source, endpoint: info.endpoint });
  };

  /** startWorker's onWindow: one call per finished window or transfers scan. */
  readonly onWindow = (r: WindowReport): void => {
    const labels = { source: r.source, stream: r.stream };
    this.c.records.inc(labels, r.records);
    this.c.rejects.inc(labels, r.rejects);
    this.c.windowSeconds.observe({ ...labels, kind: r.kind, outcome: r.outcome }, r.ms / 1000);
    this.c.windows.inc({ ...labels, outcome: r.outcome });
    if (r.outcome !== 'complete' && r.reasonCode !== null)
      this.c.windowFailures.inc({ ...labels, reason: r.reasonCode });
  };

  /** A probe found the service answering an open point differently than the previous probe. */
  onProbeChange(source: string, finding: string): void {
    this.c.probeChanges.inc({ source, finding });
  }

  /** A BullMQ job ended: `completed`, `failed` (final) or `retrying` (BullMQ will try it again). */
  onJob(name: string, outcome: 'completed' | 'failed' | 'retrying'): void {
    this.c.jobs.inc({ name, outcome });
  }

  /** Refreshes the state gauges from one status gathering (done before each scrape). */
  setStatus(status: StatusData): void {
    this.c.dayBlocked.reset(); // a day no longer blocked has no series
    for (const s of status.streams)
      for (const day of s.blockedDays) this.c.dayBlocked.set({ source: s.source, stream: s.stream, day }, 1);
    for (const s of status.streams) {
      const labels = { source: s.source, stream: s.stream };
      if (s.lagSeconds === null) this.c.lag.remove(labels);
      else this.c.lag.set(labels, s.lagSeconds);
      this.c.openWindows.set(labels, s.openWindows.length);
      this.c.incomplete.set(labels, s.incompleteWindows.length);
      this.c.openRejects.set(labels, s.openRejects);
      const phase = streamHealth(s).phase;
      for (const p of PHASES) this.c.phase.set({ ...labels, phase: phaseSlug(p) }, p === phase ? 1 : 0);
      if (s.lastSuccessAt) this.c.lastTick.set(labels, Date.parse(s.lastSuccessAt) / 1000);
      else this.c.lastTick.remove(labels);
    }
    for (const [state, n] of Object.entries(status.queue)) this.c.queue.set({ state }, n);
    for (const c of status.circuits ?? []) this.c.circuitOpen.set({ source: c.source }, c.open ? 1 : 0);
  }

  /** A day's latest reconcile: rows with unexplained differences, and quarantined records (apart). */
  recordReconcileResult(day: string, mismatches: number, at: Date = new Date(), quarantined = 0): void {
    this.reconcile.set(day, [mismatches, at.getTime() / 1000, quarantined]);
  }

  /**
   * The days restated after finance signed them off, awaiting a new sign-off (read from PostgreSQL at
   * scrape time, so every worker serves the same): 1 for each, and no series for any other day.
   */
  setRestatedAfterSignoff(days: readonly string[]): void {
    this.c.restatedAfterSignoff.reset();
    for (const day of days) this.c.restatedAfterSignoff.set({ day }, 1);
  }

  /**
   * The service's records changed shape: per stream and change (`added`, `missing`, `retyped`), how many
   * field sightings nobody has acknowledged yet (read from PostgreSQL at scrape time); 0 for the others.
   */
  setRecordShapeChanges(counts: ReadonlyArray<{ stream: string; change: string; count: number }>): void {
    this.c.recordShapeChanges.reset();
    for (const stream of ['payments', 'transfers'])
      for (const change of ['added', 'missing', 'retyped'])
        this.c.recordShapeChanges.set({ stream, change }, 0);
    for (const { stream, change, count } of counts) this.c.recordShapeChanges.set({ stream, change }, count);
  }

  recordExportResult(day: string, version: number, at: Date = new Date(), incomplete = false): void {
    this.exports.set(day, [version, at.getTime() / 1000, incomplete ? 1 : 0]);
  }

  /**
   * The recent days' packs as PostgreSQL holds them (read at scrape time, export-state.ts): each day's
   * latest version, and 1 in paysync_export_missing for each day whose pack is due and missing (no series
   * for any other day).
   */
  setExports(state: ExportState): void {
    for (const d of state.days) this.recordExportResult(d.day, d.version, d.at, d.incomplete);
    this.c.exportMissing.reset();
    for (const day of state.missing) this.c.exportMissing.set({ day }, 1);
  }

  /** The exposition text; `refresh` (status gathering) runs first, and its failure is itself a metric. */
  async render(refresh?: () => Promise<StatusData>): Promise<string> {
    if (refresh) {
      try {
        this.setStatus(await refresh());
        this.c.scrapeErrors.set(0);
      } catch {
        this.c.scrapeErrors.set(1);
      }
    }
    return this.registry.metrics();
  }

  get contentType(): string {
    return this.registry.contentType;
  }
}

function buildCollectors(registry: Registry) {
  const registers = [registry];
  const ss = ['source', 'stream'] as const;
  return {
    records: new Counter({
      name: 'paysync_records_synced_total',
      help: 'Records received and loaded, by source and stream (re-reads count again).',
      labelNames: ss,
      registers,
    }),
    rejects: new Counter({
      name: 'paysync_rejects_total',
      help: 'Records that failed validation and went to reporting.sync_rejects.',
      labelNames: ss,
      registers,
    }),
    windows: new Counter({
      name: 'paysync_windows_total',
      help: 'Windows (and transfers scans) run, by outcome: complete, incomplete (evidence short) or failed (an error ended it).',
      labelNames: [...ss, 'outcome'],
      registers,
    }),
    windowFailures: new Counter({
      name: 'paysync_window_failures_total',
      help: 'Window (and transfers scan) runs that ended incomplete or failed, by reason code (src/sync/window-reasons.ts; docs/operations.md lists them).',
      labelNames: [...ss, 'reason'],
      registers,
    }),
    windowSeconds: new Histogram({
      name: 'paysync_window_duration_seconds',
      help: 'Wall time of one window run, reads and retries included.',
      labelNames: [...ss, 'kind', 'outcome'],
      buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
      registers,
    }),
    requests: new Counter({
      name: 'paysync_upstream_requests_total',
      help: 'Attempts at the payment service, by endpoint and HTTP status ("network" when none came back).',
      labelNames: ['source', 'endpoint', 'status'],
      registers,
    }),
    retries: new Counter({
      name: 'paysync_upstream_retries_total',
      help: 'Attempts at the payment service that were retries of a failed attempt.',
      labelNames: ['source', 'endpoint'],
      registers,
    }),
    jobs: new Counter({
      name: 'paysync_jobs_total',
      help: 'BullMQ jobs this process ended, by job name and outcome (completed, retrying, failed).',
      labelNames: ['name', 'outcome'],
      registers,
    }),
    probeChanges: new Counter({
      name: 'paysync_probe_changes_total',
      help: 'Findings of the open-point probe that changed since the previous probe, by source and finding.',
      labelNames: ['source', 'finding'],
      registers,
    }),
    lag: new Gauge({
      name: 'paysync_sync_lag_seconds',
      help: 'Now minus the live checkpoint, by source and stream (before the first checkpoint: now minus where live sync starts).',
      labelNames: ss,
      registers,
    }),
    openWindows: new Gauge({
      name: 'paysync_open_windows',
      help: 'Windows being fetched right now, by source and stream.',
      labelNames: ss,
      registers,
    }),
    incomplete: new Gauge({
      name: 'paysync_incomplete_windows',
      help: 'Windows recorded incomplete and not yet completed by a later read.',
      labelNames: ss,
      registers,
    }),
    dayBlocked: new Gauge({
      name: 'paysync_day_blocked',
      help: 'Each local day whose windows failed BLOCKED_AFTER runs in a row for reasons other than an outage: 1 (paysync status names its reasons); no series for other days.',
      labelNames: [...ss, 'day'],
      registers,
    }),
    openRejects: new Gauge({
      name: 'paysync_open_rejects',
      help: 'Rejected records with no valid copy loaded since.',
      labelNames: ss,
      registers,
    }),
    phase: new Gauge({
      name: 'paysync_health_phase',
      help: 'The health phase of each source and stream: 1 for the current one (healthy, catching_up, never_synced, degraded, down), 0 for the others.',
      labelNames: [...ss, 'phase'],
      registers,
    }),
    lastTick: new Gauge({
      name: 'paysync_last_successful_tick_timestamp_seconds',
      help: 'When the last live tick succeeded, every window read complete (Unix time), by source and stream.',
      labelNames: ss,
      registers,
    }),
    queue: new Gauge({
      name: 'paysync_queue_jobs',
      help: 'Jobs in the sync queue by state (waiting, prioritized, delayed, active, failed, completed).',
      labelNames: ['state'],
      registers,
    }),
    circuitOpen: new Gauge({
      name: 'paysync_upstream_circuit_open',
      help: '1 while the service of a source is down (its circuit is open: no requests but one probe per stream per tick), else 0.',
      labelNames: ['source'],
      registers,
    }),
    scrapeErrors: new Gauge({
      name: 'paysync_status_scrape_error',
      help: '1 when the last scrape could not read the state gauges from Redis/PostgreSQL, else 0.',
      registers,
    }),
    reconcileMismatches: new Gauge({
      name: 'paysync_reconcile_mismatches',
      help: 'Rows (source, stream, status) with an unexplained difference in the last reconcile of each day (0: the warehouse matches the service; quarantined records are counted apart).',
      labelNames: ['day'],
      registers,
    }),
    reconcileQuarantined: new Gauge({
      name: 'paysync_reconcile_quarantined',
      help: 'Records the service lists for each day that paysync holds in sync_rejects (last reconcile); explained, listed in the pack, not a mismatch.',
      labelNames: ['day'],
      registers,
    }),
    reconcileAt: new Gauge({
      name: 'paysync_reconcile_timestamp_seconds',
      help: 'When each day was last reconciled (Unix time).',
      labelNames: ['day'],
      registers,
    }),
    exportVersion: new Gauge({
      name: 'paysync_export_version',
      help: 'Latest reconciliation pack version written for each day.',
      labelNames: ['day'],
      registers,
    }),
    exportAt: new Gauge({
      name: 'paysync_export_timestamp_seconds',
      help: 'When the pack of each day was last exported (Unix time).',
      labelNames: ['day'],
      registers,
    }),
    recordShapeChanges: new Gauge({
      name: 'paysync_record_shape_changes',
      help: "Changes in the shape of the service's records not yet acknowledged (paysync probe --ack FIELD): fields added, listed fields missing or retyped, per stream.",
      labelNames: ['stream', 'change'],
      registers,
    }),
    restatedAfterSignoff: new Gauge({
      name: 'paysync_restated_after_signoff',
      help: 'Days whose records changed after finance signed off a version (1 each, until a new version is signed off); no series for other days.',
      labelNames: ['day'],
      registers,
    }),
    exportMissing: new Gauge({
      name: 'paysync_export_missing',
      help: 'Days whose pack the daily job should have published by now (after EXPORT_AT and the grace period) and that have none: 1 each; no series for other days.',
      labelNames: ['day'],
      registers,
    }),
    exportIncomplete: new Gauge({
      name: 'paysync_export_incomplete',
      help: '1 when the pack of each day was published incomplete (sync did not cover the day by the grace period), else 0.',
      labelNames: ['day'],
      registers,
    }),
  };
}

/** The process-wide metrics the worker serves; reconcile and export record into it. */
export const metrics = new PaysyncMetrics();

export function recordReconcileResult(day: string, mismatches: number): void {
  metrics.recordReconcileResult(day, mismatches);
}

export function recordExportResult(day: string, version: number, incomplete = false): void {
  metrics.recordExportResult(day, version, new Date(), incomplete);
}
