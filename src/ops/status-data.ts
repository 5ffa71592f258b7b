/**
 * Where sync stands, per source and stream: the facts behind `paysync status`, the ops status page and the
 * scrape-time gauges of /metrics. One gathering, three views; the phase each view shows is decided from
 * these facts by one pure function (status-health.ts). Reads Redis (checkpoints, circuits, queue counts) and
 * PostgreSQL (open rejects, failing windows, whether anything ever synced); never writes.
 */
import type { Pool } from 'pg';
import type { Queue } from 'bullmq';
import type { Settings, Source } from '../config/settings.js';
import { windowKey, type CheckpointStore } from '../sync/checkpoints.js';
import type { CircuitState } from '../sync/circuit.js';
import { syncStart } from '../sync/tick-plan.js';
import { STREAMS, type Stream } from '../upstream/schemas.js';
import { blockedDays } from './blocked-days.js';
import { failingWindows } from './window-failures.js';

export interface StreamStatus {
  source: string;
  stream: Stream;
  checkpoint: string | null;
  /**
   * Now minus the checkpoint; before the first checkpoint, now minus where live sync starts (SYNC_START),
   * so a stream that never syncs is seen falling behind (and the lag alert can fire).
   */
  lagSeconds: number | null;
  lagFrom: 'checkpoint' | 'sync start';
  openWindows: string[];
  /**
   * Windows failing now: marked incomplete in Redis, or recorded incomplete or failed in the sync log and
   * not read completely since (a complete read of a window covering it, at or after it).
   */
  incompleteWindows: Array<{ window: string; detail: string }>;
  lastSuccessAt: string | null;
  lastError: string | null;
  /** When the last error happened (ISO), to tell a stream failing now from one that failed and recovered. */
  lastErrorAt: string | null;
  /** The last error's code (src/error-codes.ts): an outage-class code makes the stream `down`. */
  lastErrorCode: string | null;
  /** A tick succeeded, or a window was read completely, at least once (Redis or the sync log). */
  everSynced: boolean;
  /** Local days whose windows failed BLOCKED_AFTER runs in a row, outages aside (blocked-days.ts). */
  blockedDays: string[];
  /**
   * The source's circuit when it is open (src/sync/circuit.ts: the service failed every recent attempt,
   * and only a probe per stream goes out each tick); null when closed. Both streams of a source share it.
   */
  circuit: { since: string | null; lastError: string | null } | null;
  openRejects: number;
}

export type QueueCounts = Record<string, number>;

export interface StatusData {
  queue: QueueCounts;
  streams: StreamStatus[];
  /** Each source's circuit breaker (open: the service is down, src/sync/circuit.ts), when read. */
  circuits?: CircuitState[];
}

export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'prioritized', 'failed', 'completed'] as const;

export interface StatusDeps {
  pool: Pool;
  checkpoints: CheckpointStore;
  sources: readonly Source[];
  /** Where live sync starts (the lag before a first checkpoint); BLOCKED_AFTER (default 6): blocked days. */
  settings: Pick<Settings, 'SYNC_START' | 'REPORT_TIMEZONE'> & Partial<Pick<Settings, 'BLOCKED_AFTER'>>;
  queue: Pick<Queue, 'getJobCounts'>;
  /** The circuit of a source (readCircuit); without it, no stream is seen down by its circuit. */
  circuits?: (source: string) => Promise<CircuitState>;
  now?: () => Date;
}

export async function gatherStatus(deps: StatusDeps): Promise<StatusData> {
  const queue = await deps.queue.getJobCounts(...QUEUE_STATES);
  const [rejects, failing, synced, blocked] = await Promise.all([
    openRejects(deps.pool),
    failingByStream(deps.pool),
    everSynced(deps.pool),
    blockedDays(deps.pool, deps.settings.REPORT_TIMEZONE, deps.settings.BLOCKED_AFTER ?? 6),
  ]);
  const at = (deps.now ?? (() => new Date()))();
  const now = at.getTime();
  const start = syncStart(deps.settings, at);
  const streams: StreamStatus[] = [];
  const circuits: CircuitState[] = [];
  for (const source of deps.sources) {
    const circuit = deps.circuits ? await deps.circuits(source.name) : null;
    if (circuit) circuits.push(circuit);
    for (const stream of STREAMS) {
      const s = await deps.checkpoints.get(source.name, stream);
      const key = `${source.name}/${stream}`;
      const from = s.checkpoint ?? start;
      const marked = s.incompleteWindows.map((w) => ({ window: w.window, detail: w.detail }));
      const logged = (failing.get(key) ?? []).filter((w) => !marked.some((m) => m.window === w.window));
      streams.push({
        source: source.name,
        stream,
        checkpoint: s.checkpoint?.toISOString() ?? null,
        lagSeconds: Math.max(0, Math.round((now - from.getTime()) / 1000)),
        lagFrom: s.checkpoint ? 'checkpoint' : 'sync start',
        openWindows: s.openWindows,
        incompleteWindows: [...marked, ...logged],
        lastSuccessAt: s.lastSuccessAt?.toISOString() ?? null,
        lastError: s.lastError
          ? `${s.lastError.at.toISOString()} ${s.lastError.code}: ${s.lastError.message}`
          : null,
        lastErrorAt: s.lastError?.at.toISOString() ?? null,
        lastErrorCode: s.lastError?.code ?? null,
        everSynced: s.lastSuccessAt !== null || s.checkpoint !== null || synced.has(key),
        blockedDays: blocked.filter((d) => `${d.source}/${d.stream}` === key).map((d) => d.day),
        circuit: circuit?.open
          ? { since: circuit.since?.toISOString() ?? null, lastError: circuit.lastError }
          : null,
        openRejects: rejects.get(key) ?? 0,
      });
    }
  }
  return deps.circuits ? { queue, streams, circuits } : { queue, streams };
}

/** Failing windows listed per stream at most (the count of a long outage's windows is not the point). */
const FAILING_LISTED = 50;

/**
 * Per `source/stream`, the windows of the sync log failing now (window-failures.ts: not complete, and no
 * complete read has covered them since; the same rule as Redis's incomplete marks), newest first.
 */
async function failingByStream(pool: Pool): Promise<Map<string, Array<{ window: string; detail: string }>>> {
  const out = new Map<string, Array<{ window: string; detail: string }>>();
  for (const w of await failingWindows(pool, Number.MAX_SAFE_INTEGER, FAILING_LISTED)) {
    const key = `${w.source}/${w.stream}`;
    const list = out.get(key) ?? [];
    list.push({
      window: windowKey(w.windowStart, w.windowEnd),
      detail: `${w.reasonCode}: ${w.detail ?? w.outcome}`,
    });
    out.set(key, list);
  }
  return out;
}

/** The `source/stream`s the sync log holds a completely read window of. */
async function everSynced(pool: Pool): Promise<Set<string>> {
  const { rows } = await pool.query<{ source: string; stream: string }>(
    `SELECT source, stream FROM reporting.sync_runs WHERE complete_until IS NOT NULL`,
  );
  return new Set(rows.map((r) => `${r.source}/${r.stream}`));
}

type RejectRow = { source: string; stream: string; n: string };

/** Open rejects per `source/stream`; an unmigrated warehouse counts as none rather than failing. */
async function openRejects(pool: Pool): Promise<Map<string, number>> {
  const { rows } = await pool
    .query<RejectRow>(
      `SELECT source, stream, count(*) AS n FROM reporting.sync_rejects WHERE resolved_at IS NULL GROUP BY source, stream`,
    )
    .catch(() => ({ rows: [] as RejectRow[] }));
  return new Map(rows.map((r) => [`${r.source}/${r.stream}`, Number(r.n)]));
}
