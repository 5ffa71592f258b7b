/**
 * Where sync stands, per source and stream: the data behind `paysync status`, the ops status page and the
 * scrape-time gauges of /metrics. One gathering, three views. Reads Redis (checkpoints, circuits, queue counts) and
 * PostgreSQL (open rejects, reconcile results); never writes.
 */
import type { Pool } from 'pg';
import type { Queue } from 'bullmq';
import type { Source } from '../config/settings.js';
import type { CheckpointStore } from '../sync/checkpoints.js';
import type { CircuitState } from '../sync/circuit.js';
import { STREAMS, type Stream } from '../upstream/schemas.js';

export interface StreamStatus {
  source: string;
  stream: Stream;
  checkpoint: string | null;
  lagSeconds: number | null;
  openWindows: string[];
  incompleteWindows: Array<{ window: string; detail: string }>;
  lastSuccessAt: string | null;
  lastError: string | null;
  /** When the last error happened (ISO), to tell a stream failing now from one that failed and recovered. */
  lastErrorAt: string | null;
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
  queue: Pick<Queue, 'getJobCounts'>;
  now?: () => Date;
  /** Reads a source's circuit (readCircuit); without it, circuits are not shown. */
  circuit?: (source: string) => Promise<CircuitState>;
}

export async function gatherStatus(deps: StatusDeps): Promise<StatusData> {
  const queue = await deps.queue.getJobCounts(...QUEUE_STATES);
  const rejects = await openRejects(deps.pool);
  const now = (deps.now ?? (() => new Date()))().getTime();
  const streams: StreamStatus[] = [];
  for (const source of deps.sources) {
    for (const stream of STREAMS) {
      const s = await deps.checkpoints.get(source.name, stream);
      streams.push({
        source: source.name,
        stream,
        checkpoint: s.checkpoint?.toISOString() ?? null,
        lagSeconds: s.checkpoint ? Math.round((now - s.checkpoint.getTime()) / 1000) : null,
        openWindows: s.openWindows,
        incompleteWindows: s.incompleteWindows.map((w) => ({ window: w.window, detail: w.detail })),
        lastSuccessAt: s.lastSuccessAt?.toISOString() ?? null,
        lastError: s.lastError
          ? `${s.lastError.at.toISOString()} ${s.lastError.code}: ${s.lastError.message}`
          : null,
        lastErrorAt: s.lastError?.at.toISOString() ?? null,
        openRejects: rejects.get(`${source.name}/${stream}`) ?? 0,
      });
    }
  }
  const { circuit } = deps;
  if (!circuit) return { queue, streams };
  return { queue, streams, circuits: await Promise.all(deps.sources.map((s) => circuit(s.name))) };
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
