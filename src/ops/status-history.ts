/**
 * The last 24 hours for the status page's charts, from what paysync already keeps:
 * - the queue's finished jobs (BullMQ keeps completed ones 24 h, failed ones 7 days: jobs/queue.ts): each
 *   live tick's result (incomplete windows, the payments checkpoint it reached), each job that failed for
 *   good;
 * - the records' first_seen_at: records new to the warehouse per hour, each counted once (a tick re-reads
 *   its lookback every time: counting what it read would count the same records again and again);
 * - reporting.sync_rejects: when each quarantined record was first seen.
 * Lag is rebuilt at each quarter hour and at each tick's end as that moment minus the checkpoint the latest tick before it had
 * reached (a transfers tick that completes moves the checkpoint to its start minus SETTLE_LAG, tick.ts);
 * the last point is the live checkpoint's lag. A moment no tick precedes within the 24 h has no point.
 */
import type { Job, Queue } from 'bullmq';
import type { Pool } from 'pg';
import type { StreamStatus } from './status-data.js';

const HOUR = 3_600_000;
export const HISTORY_HOURS = 24;
const LAG_STEP = 15 * 60_000;
/** Newest finished jobs read from the queue (a day of ticks for a few sources, plus backfill items). */
const JOBS_READ = 3_000;

export interface Point {
  at: number;
  value: number;
}

export interface Series {
  name: string;
  points: Point[];
}

export interface History {
  from: number;
  to: number;
  /** Lag in minutes, per source/stream. */
  lag: Series[];
  /** Records new to the warehouse (first seen), per hour (point at the hour's start), per stream. */
  records: Series[];
  rejects: Series[];
  failures: Series[];
}

export interface HistoryDeps {
  pool: Pool;
  queue: Pick<Queue, 'getJobs'>;
  settleLagMs: number;
}

type FinishedJob = Pick<Job, 'name' | 'data' | 'returnvalue' | 'finishedOn' | 'processedOn'>;

export async function gatherHistory(
  deps: HistoryDeps,
  streams: readonly StreamStatus[],
  now: Date,
): Promise<History> {
  const to = now.getTime();
  const from = to - HISTORY_HOURS * HOUR;
  const [completed, failed, rejects, newRecords] = await Promise.all([
    deps.queue.getJobs(['completed'], 0, JOBS_READ - 1, false),
    deps.queue.getJobs(['failed'], 0, JOBS_READ - 1, false),
    rejectsPerHour(deps.pool, new Date(hourStart(from))),
    newRecordsPerHour(deps.pool, new Date(hourStart(from))),
  ]);
  const recent = (jobs: FinishedJob[]) => jobs.filter((j) => j && (j.finishedOn ?? 0) >= from - HOUR);
  return historyOf({
    completed: recent(completed),
    failed: recent(failed),
    rejects,
    newRecords,
    streams,
    from,
    to,
    settleLagMs: deps.settleLagMs,
  });
}

const hourStart = (t: number) => Math.floor(t / HOUR) * HOUR;

type RejectRow = { hour: Date; stream: string; n: number };

async function rejectsPerHour(pool: Pool, since: Date): Promise<RejectRow[]> {
  const { rows } = await pool.query<RejectRow>(
    `SELECT date_trunc('hour', first_seen_at) AS hour, stream, count(*)::int AS n
       FROM reporting.sync_rejects WHERE first_seen_at >= $1 GROUP BY 1, 2`,
    [since],
  );
  return rows;
}

/**
 * Records first stored per hour and stream since `since` (the indexes of sql/022 keep it to those rows):
 * each record once, however often it was read again.
 */
async function newRecordsPerHour(pool: Pool, since: Date): Promise<RejectRow[]> {
  const { rows } = await pool.query<RejectRow>(
    `SELECT date_trunc('hour', first_seen_at) AS hour, 'payments' AS stream, count(*)::int AS n
       FROM reporting.payments WHERE first_seen_at >= $1 GROUP BY 1
     UNION ALL
     SELECT date_trunc('hour', first_seen_at), 'transfers', count(*)::int
       FROM reporting.transfers WHERE first_seen_at >= $1 GROUP BY 1`,
    [since],
  );
  return rows;
}

interface HistoryInput {
  completed: FinishedJob[];
  failed: FinishedJob[];
  rejects: RejectRow[];
  /** Records first stored, per hour and stream. */
  newRecords: RejectRow[];
  streams: readonly StreamStatus[];
  from: number;
  to: number;
  settleLagMs: number;
}

type Result = { incomplete?: number; checkpoint?: string | null; outcome?: string } | null;
type Data = { source?: string; stream?: string };

/** The charts' series from the finished jobs, the records first seen and the rejects. Pure. */
export function historyOf(input: HistoryInput): History {
  const hours = Array.from(
    { length: HISTORY_HOURS },
    (_, i) => hourStart(input.to) - (HISTORY_HOURS - 1 - i) * HOUR,
  );
  const perHour = () => new Map(hours.map((h) => [h, 0]));
  const failures = new Map<string, Map<number, number>>();
  const add = (m: Map<string, Map<number, number>>, key: string, at: number, n: number) => {
    const series = m.get(key) ?? perHour();
    const h = hourStart(at);
    if (series.has(h)) series.set(h, (series.get(h) ?? 0) + n);
    m.set(key, series);
  };
  for (const j of input.completed) {
    const d = j.data as Data;
    const r = j.returnvalue as Result;
    if (!d.stream || !j.finishedOn) continue;
    if (j.name === 'tick') {
      const incomplete = d.stream === 'payments' ? (r?.incomplete ?? 0) : r?.outcome === 'incomplete' ? 1 : 0;
      if (incomplete > 0) add(failures, `${d.stream}: incomplete windows`, j.finishedOn, incomplete);
    }
  }
  for (const j of input.failed) {
    if (j.finishedOn) add(failures, `${(j.data as Data).stream ?? j.name}: failed jobs`, j.finishedOn, 1);
  }
  const rejects = new Map<string, Map<number, number>>();
  for (const r of input.rejects) add(rejects, r.stream, r.hour.getTime(), r.n);
  const records = new Map<string, Map<number, number>>();
  for (const r of input.newRecords) add(records, r.stream, r.hour.getTime(), r.n);
  const toSeries = (m: Map<string, Map<number, number>>): Series[] =>
    [...m.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([name, byHour]) => ({
        name,
        points: [...byHour.entries()].map(([at, value]) => ({ at, value })),
      }));
  return {
    from: input.from,
    to: input.to,
    lag: lagSeries(input),
    records: toSeries(records),
    rejects: toSeries(rejects),
    failures: toSeries(failures),
  };
}

/** Checkpoints reached by completed ticks, per source/stream, in finishing order. */
function checkpointsOf(input: HistoryInput): Map<string, Array<{ at: number; checkpoint: number }>> {
  const out = new Map<string, Array<{ at: number; checkpoint: number }>>();
  for (const j of input.completed) {
    const d = j.data as Data;
    const r = j.returnvalue as Result;
    if (j.name !== 'tick' || !j.finishedOn || !d.source || !d.stream) continue;
    let checkpoint: number | null = null;
    if (d.stream === 'payments' && r?.checkpoint) checkpoint = Date.parse(r.checkpoint);
    if (d.stream === 'transfers' && r?.outcome === 'complete' && j.processedOn)
      checkpoint = j.processedOn - input.settleLagMs;
    if (checkpoint === null || Number.isNaN(checkpoint)) continue;
    const key = `${d.source}/${d.stream}`;
    out.set(key, [...(out.get(key) ?? []), { at: j.finishedOn, checkpoint }]);
  }
  for (const list of out.values()) list.sort((a, b) => a.at - b.at);
  return out;
}

/** Lag at every quarter hour and at every tick's end (its lag just after it), then the live lag now. */
function lagSeries(input: HistoryInput): Series[] {
  const reached = checkpointsOf(input);
  return input.streams.map((s) => {
    const events = reached.get(`${s.source}/${s.stream}`) ?? [];
    const moments = new Set<number>();
    for (let t = input.from; t < input.to; t += LAG_STEP) moments.add(t);
    for (const e of events) if (e.at >= input.from && e.at < input.to) moments.add(e.at);
    const points: Point[] = [];
    let i = -1;
    let best = -Infinity;
    for (const t of [...moments].sort((a, b) => a - b)) {
      while (i + 1 < events.length && (events[i + 1] as { at: number }).at <= t) {
        i += 1;
        best = Math.max(best, (events[i] as { checkpoint: number }).checkpoint); // never backwards
      }
      if (i >= 0) points.push({ at: t, value: Math.max(0, t - best) / 60_000 });
    }
    if (s.lagSeconds !== null) points.push({ at: input.to, value: s.lagSeconds / 60 });
    return { name: `${s.source}/${s.stream}`, points };
  });
}
