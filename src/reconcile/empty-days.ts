/**
 * A suspiciously empty day: a source's stream with no record on a day when each of the seven days before
 * it had at least ten (a date filter the service ignored, or an outage answered as an empty list, looks
 * exactly like a quiet day). Such a day is `final` only on evidence from the sync log: two complete
 * reads of the day at least an hour apart, both after the day ended (the later one at least SETTLE_LAG
 * after, so it vouches for the whole day). The pack's manifest then says "empty, confirmed by reads at T1
 * and T2".
 *
 * Why two such reads show the day empty: a complete read stores every record the service listed and
 * quarantines what it could not store, and records are never deleted; with no record and no open reject
 * of the day in the warehouse now, no complete read ever found one, and a read is complete only when the
 * service's own `total` (where it sends one) matched what it sent. The reads are each window's latest
 * (`fetched_at`) and its first complete read after it ended (`first_read_after_end`, sql/020); transfers
 * are read as whole-list scans, one sync-log row each.
 */
import type { Pool, PoolClient } from 'pg';
import { DateTime } from 'luxon';
import { dayWindow } from '../sync/windows.js';
import type { EmptyEvidence } from './manifest.js';

export const BUSY_DAYS = 7;
export const BUSY_RECORDS = 10;
export const READS_APART_MS = 3_600_000;

type Db = Pool | PoolClient;
type Stream = EmptyEvidence['stream'];

export interface EmptyDaySettings {
  sources: readonly string[];
  zone: string;
  settleLagMs: number;
}

export interface EmptyDayCheck {
  confirmed: EmptyEvidence[];
  /** One reason per suspicious stream not confirmed yet. */
  unconfirmed: string[];
}

/**
 * $1, $2 the day's range, $3 the sources: each source's streams without a record on the day (rejects
 * aside). The first record found ends each look, so a busy day costs a few index reads, not a count.
 */
const NO_RECORD_SQL = `
  SELECT s.source, st.stream
    FROM unnest($3::text[]) AS s(source) CROSS JOIN (VALUES ('payments'), ('transfers')) AS st(stream)
   WHERE NOT CASE st.stream
     WHEN 'payments' THEN EXISTS (SELECT 1 FROM reporting.payments p
                                   WHERE p.source = s.source AND p.created_at >= $1 AND p.created_at < $2)
     ELSE EXISTS (SELECT 1 FROM reporting.transfers t
                   WHERE t.source = s.source AND t.created_at >= $1 AND t.created_at < $2) END`;

/** $1, $2 the range, $3 the zone, $4 the streams to count: records and open rejects per source and local day. */
const COUNTS_SQL = `
  SELECT source, stream, day, sum(n)::int AS n FROM (
    SELECT source, 'payments' AS stream, (created_at AT TIME ZONE $3)::date::text AS day, count(*) AS n
      FROM reporting.payments WHERE 'payments' = ANY($4::text[]) AND created_at >= $1 AND created_at < $2
     GROUP BY 1, 2, 3
    UNION ALL
    SELECT source, 'transfers', (created_at AT TIME ZONE $3)::date::text, count(*)
      FROM reporting.transfers WHERE 'transfers' = ANY($4::text[]) AND created_at >= $1 AND created_at < $2
     GROUP BY 1, 2, 3
    UNION ALL
    SELECT source, stream, (reporting.try_timestamptz(raw->>'createdAt') AT TIME ZONE $3)::date::text, count(*)
      FROM reporting.sync_rejects
     WHERE resolved_at IS NULL AND stream = ANY($4::text[]) AND reporting.try_timestamptz(raw->>'createdAt') >= $1
       AND reporting.try_timestamptz(raw->>'createdAt') < $2 GROUP BY 1, 2, 3
  ) c GROUP BY 1, 2, 3`;

/** $1 source, $2 stream, $3 day start, $4 day end, $5 SETTLE_LAG ms, $6 READS_APART_MS. */
const READS_SQL = `
  WITH r AS (
    SELECT fetched_at, first_read_after_end FROM reporting.sync_windows
     WHERE source = $1 AND stream = $2 AND outcome = 'complete' AND window_start <= $3 AND window_end >= $4),
  later AS (SELECT max(fetched_at) AS t FROM r WHERE fetched_at >= $4 + $5 * interval '1 millisecond'),
  reads AS (SELECT fetched_at AS t FROM r UNION ALL SELECT first_read_after_end FROM r)
  SELECT (SELECT max(t) FROM reads WHERE t >= $4
             AND t <= (SELECT t FROM later) - $6 * interval '1 millisecond') AS t1,
         (SELECT t FROM later) AS t2,
         (SELECT min(t) FROM reads WHERE t >= $4) AS first_after`;

function shift(day: string, days: number, zone: string): string {
  return DateTime.fromISO(day, { zone }).plus({ days }).toISODate() as string;
}

/** The streams of `day` that are empty after seven busy days. Pure. */
export function suspiciousStreams(
  counts: ReadonlyMap<string, number>,
  sources: readonly string[],
  day: string,
  zone: string,
): Array<{ source: string; stream: Stream }> {
  const n = (source: string, stream: Stream, d: string) => counts.get(`${source}/${stream}/${d}`) ?? 0;
  const before = Array.from({ length: BUSY_DAYS }, (_, i) => shift(day, -(i + 1), zone));
  return sources.flatMap((source) =>
    (['payments', 'transfers'] as const)
      .filter((stream) => n(source, stream, day) === 0)
      .filter((stream) => before.every((d) => n(source, stream, d) >= BUSY_RECORDS))
      .map((stream) => ({ source, stream })),
  );
}

export async function checkEmptyDay(db: Db, s: EmptyDaySettings, day: string): Promise<EmptyDayCheck> {
  const w = dayWindow(day, s.zone);
  const out: EmptyDayCheck = { confirmed: [], unconfirmed: [] };
  // only a stream with no record on the day can be suspicious: the busy week is counted for those alone
  const { rows: none } = await db.query<{ source: string; stream: Stream }>(NO_RECORD_SQL, [
    w.start,
    w.end,
    [...s.sources],
  ]);
  if (none.length === 0) return out;
  const first = dayWindow(shift(day, -BUSY_DAYS, s.zone), s.zone).start;
  const streams = [...new Set(none.map((r) => r.stream))];
  const { rows } = await db.query<{ source: string; stream: string; day: string; n: number }>(COUNTS_SQL, [
    first,
    w.end,
    s.zone,
    streams,
  ]);
  const counts = new Map(rows.map((r) => [`${r.source}/${r.stream}/${r.day}`, r.n]));
  const empty = new Set(none.map((r) => `${r.source}/${r.stream}`));
  const suspicious = suspiciousStreams(counts, s.sources, day, s.zone).filter((x) =>
    empty.has(`${x.source}/${x.stream}`),
  );
  for (const { source, stream } of suspicious) {
    const { rows: found } = await db.query<{ t1: Date | null; t2: Date | null; first_after: Date | null }>(
      READS_SQL,
      [source, stream, w.start, w.end, s.settleLagMs, READS_APART_MS],
    );
    const { t1, t2, first_after } = found[0] ?? { t1: null, t2: null, first_after: null };
    if (t1 && t2) {
      const reads: [string, string] = [t1.toISOString(), t2.toISOString()];
      out.confirmed.push({
        source,
        stream,
        reads,
        text: `empty, confirmed by reads at ${reads[0]} and ${reads[1]}`,
      });
    } else {
      const seen = first_after
        ? `first read after the day ended at ${first_after.toISOString()}`
        : 'no read after the day ended yet';
      out.unconfirmed.push(
        `${source}/${stream} has no record after ${BUSY_DAYS} days of at least ${BUSY_RECORDS}: final once two reads at least an hour apart, both after the day ended, find it empty (${seen})`,
      );
    }
  }
  return out;
}
