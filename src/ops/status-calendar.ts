/**
 * The facts behind the status page's calendar: for each of the last CALENDAR_DAYS local days in
 * REPORT_TIMEZONE, its coverage by sync, its latest published pack, its latest reconcile with the records
 * behind it, its records not yet final, and its totals. A handful of queries for the whole range, each on
 * an index (export_versions' key, reconcile_results (day, checked_at), reconcile_records (run_id), the
 * sync log's (source, stream, window_end), the records' created_at, daily_totals_by_zone's key), so the
 * page costs the same with a year of history as with a week. Reads only.
 */
import { DateTime } from 'luxon';
import type { Pool } from 'pg';
import { coverageOf, coveringWindows } from '../reconcile/coverage.js';
import { OPEN_RECORDS_BY_DAY_SQL } from '../reconcile/pack-query.js';
import { MISMATCH_SQL } from '../reconcile/reconcile-store.js';
import type { RecordDifference } from '../reconcile/record-diff.js';
import { daysBetween, dayWindow, localDayOf, type Window } from '../sync/windows.js';
import { dayState, type DayReconcile, type DayState, type PublishedPack } from './status-day-state.js';
import { signoffStates } from '../reconcile/signoff-store.js';
import type { DaySignoff } from '../reconcile/signoff-state.js';

export const CALENDAR_DAYS = 35;
/** Records listed per day and kind group (quarantined, differing); the counts are always complete. */
export const LISTED_RECORDS = 10;

export interface PackFileEntry {
  name: string;
  path: string;
  rows: number | null;
  sha256: string | null;
}

export interface DayPack extends PublishedPack {
  files: PackFileEntry[];
  totals: Array<{ stream: string; records: number; amount: string }>;
}

/** A record of a day's last reconcile, as read back from reporting.reconcile_records. */
export type ListedRecord = Omit<RecordDifference, 'kind' | 'stream'> & { kind: string; stream: string };

export interface CalendarDay {
  day: string;
  state: DayState;
  reason: string;
  pack: DayPack | null;
  reconcile: DayReconcile | null;
  /** Records of the latest reconcile behind its differences, by kind (complete counts). */
  recordCounts: Record<string, number>;
  /** The first LISTED_RECORDS quarantined and the first LISTED_RECORDS others. */
  records: ListedRecord[];
  /** The warehouse's count and exact sum (NUMERIC as text) per stream, now. */
  totals: Array<{ stream: string; records: number; amount: string }>;
  openRecords: number;
}

export interface CalendarSettings {
  sources: readonly string[];
  zone: string;
  settleLagMs: number;
  horizonMs: number;
  /** Where live sync starts (tick-plan.ts syncStart): earlier days are out of its range. */
  syncStart: Date;
}

/** The last `days` local days, oldest first, ending with today. */
export function calendarDays(now: Date, zone: string, days = CALENDAR_DAYS): string[] {
  const today = localDayOf(now, zone);
  const first = DateTime.fromISO(today, { zone })
    .minus({ days: days - 1 })
    .toISODate() as string;
  return daysBetween(first, today, zone);
}

export async function gatherCalendar(pool: Pool, s: CalendarSettings, now: Date): Promise<CalendarDay[]> {
  const days = calendarDays(now, s.zone);
  const first = days[0] as string;
  const last = days[days.length - 1] as string;
  const range: Window = { start: dayWindow(first, s.zone).start, end: dayWindow(last, s.zone).end };
  const [packs, reconciles, windows, open, totals, reading, signoffs] = await Promise.all([
    latestPacks(pool, first, last),
    latestReconciles(pool, first, last),
    coveringWindows(pool, s.sources, range, s.settleLagMs),
    openByDay(pool, range, s.zone),
    totalsByDay(pool, range, first, last, s.zone),
    backfillWindows(pool),
    restatedDays(pool, first, last),
  ]);
  const listed = await listedRecords(
    pool,
    [...reconciles.values()].map((r) => r.runId),
  );
  return days.map((day) => {
    const window = dayWindow(day, s.zone);
    const coverage = coverageOf(windows, s.sources, window);
    const pack = packs.get(day) ?? null;
    const reconcile = reconciles.get(day) ?? null;
    const openRecords = open.get(day) ?? 0;
    const backfillReading = reading.some(
      (w) => w.scan || (w.start! < window.end.getTime() && w.end! > window.start.getTime()),
    );
    const verdict = withSignoff(
      signoffs.get(day),
      dayState({
        day,
        window,
        now,
        horizonMs: s.horizonMs,
        coverage,
        openRecords,
        pack,
        reconcile,
        backfillReading,
        syncStart: s.syncStart,
      }),
    );
    const runRecords = reconcile ? listed.get(reconcile.runId) : undefined;
    return {
      day,
      ...verdict,
      pack,
      reconcile,
      recordCounts: runRecords?.counts ?? {},
      records: runRecords?.records ?? [],
      totals: totals.get(day) ?? [],
      openRecords,
    };
  });
}

/** Days of the range restated after sign-off (a warehouse that cannot tell reads as none). */
async function restatedDays(pool: Pool, from: string, to: string): Promise<Map<string, DaySignoff>> {
  const days = await signoffStates(pool, { from, to, signedOnly: true }).catch(() => [] as DaySignoff[]);
  return new Map(days.filter((d) => d.state === 'restated after sign-off').map((d) => [d.day, d]));
}

/** A day restated after sign-off shows as such, whatever its pack's state (which its reason keeps). */
function withSignoff(signoff: DaySignoff | undefined, verdict: { state: DayState; reason: string }) {
  if (!signoff) return verdict;
  return { state: 'restated' as const, reason: `${signoff.summary}; ${verdict.state}: ${verdict.reason}` };
}

type ManifestJson = {
  stateReason?: string;
  files?: Record<string, { path?: string; rows?: number; sha256?: string }>;
  totals?: Record<string, { records?: number; amount?: string }>;
};

async function latestPacks(pool: Pool, first: string, last: string): Promise<Map<string, DayPack>> {
  const { rows } = await pool.query<{
    day: string;
    version: number;
    state: DayPack['state'];
    generated_at: Date;
    manifest: ManifestJson;
  }>(
    `SELECT DISTINCT ON (day) day::text AS day, version, state, generated_at,
            jsonb_build_object('stateReason', manifest->'stateReason', 'files', manifest->'files',
                               'totals', manifest->'totals') AS manifest
       FROM reporting.export_versions
      WHERE day BETWEEN $1::date AND $2::date
      ORDER BY day, version DESC`,
    [first, last],
  );
  return new Map(
    rows.map((r) => {
      const files = Object.entries(r.manifest.files ?? {}).map(([name, f]) => ({
        name,
        path: `${r.day}/v${r.version}/${f.path ?? name}`,
        rows: f.rows ?? null,
        sha256: f.sha256 ?? null,
      }));
      const totals = Object.entries(r.manifest.totals ?? {}).map(([stream, t]) => ({
        stream,
        records: t.records ?? 0,
        amount: t.amount ?? '0',
      }));
      const pack: DayPack = {
        version: r.version,
        state: r.state,
        generatedAt: r.generated_at,
        stateReason: r.manifest.stateReason ?? '',
        files,
        totals,
      };
      return [r.day, pack];
    }),
  );
}

type ReconcileOfDay = DayReconcile & { runId: string };

async function latestReconciles(
  pool: Pool,
  first: string,
  last: string,
): Promise<Map<string, ReconcileOfDay>> {
  const { rows } = await pool.query<ReconcileOfDay & { day: string }>(
    `WITH latest AS (
       SELECT DISTINCT ON (day) day AS d, run_id AS rid, checked_at AS at
         FROM reporting.reconcile_results
        WHERE day BETWEEN $1::date AND $2::date
        ORDER BY day, checked_at DESC
     ), marked AS (
       SELECT d, rid, at, quarantined, coalesce(unexplained, difference) AS left_over, ${MISMATCH_SQL} AS mismatch
         FROM latest JOIN reporting.reconcile_results ON run_id = rid
     )
     SELECT d::text AS day, rid AS "runId", at AS "checkedAt",
            count(*) FILTER (WHERE mismatch)::int AS mismatches,
            coalesce(sum(abs(left_over)) FILTER (WHERE mismatch), 0)::int AS unexplained,
            sum(quarantined)::int AS quarantined
       FROM marked GROUP BY d, rid, at`,
    [first, last],
  );
  return new Map(rows.map(({ day, ...r }) => [day, r]));
}

async function listedRecords(
  pool: Pool,
  runIds: string[],
): Promise<Map<string, { counts: Record<string, number>; records: ListedRecord[] }>> {
  const out = new Map<string, { counts: Record<string, number>; records: ListedRecord[] }>();
  if (runIds.length === 0) return out;
  const { rows } = await pool.query<ListedRecord & { runId: string; n: number; total: number }>(
    `SELECT * FROM (
       SELECT run_id AS "runId", kind, source, stream, record_id AS id, service_status AS "serviceStatus",
              warehouse_status AS "warehouseStatus", service_amount::text AS "serviceAmount",
              warehouse_amount::text AS "warehouseAmount", reason,
              row_number() OVER (PARTITION BY run_id, kind = 'quarantined' ORDER BY kind, record_id COLLATE "C") AS n,
              count(*) OVER (PARTITION BY run_id, kind)::int AS total
         FROM reporting.reconcile_records WHERE run_id = ANY($1::uuid[])
     ) x ORDER BY "runId", n`,
    [runIds],
  );
  for (const { runId, n, total, ...record } of rows) {
    const entry = out.get(runId) ?? { counts: {}, records: [] };
    entry.counts[record.kind] = total;
    if (Number(n) <= LISTED_RECORDS) entry.records.push(record);
    out.set(runId, entry);
  }
  return out;
}

async function openByDay(pool: Pool, range: Window, zone: string): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ day: string; open: number }>(OPEN_RECORDS_BY_DAY_SQL, [
    range.start,
    range.end,
    zone,
  ]);
  return new Map(rows.map((r) => [r.day, Number(r.open)]));
}

type TotalRow = { day: string; stream: string; records: number; amount: string };

/**
 * Count and exact sum per day and stream: from daily_totals_by_zone (sql/014) when the zone is kept there,
 * else grouped from the records of the range (created_at index).
 */
async function totalsByDay(
  pool: Pool,
  range: Window,
  first: string,
  last: string,
  zone: string,
): Promise<Map<string, Array<{ stream: string; records: number; amount: string }>>> {
  const { rows } = await pool.query<TotalRow>(
    `SELECT day::text AS day, stream, sum(records)::bigint AS records, sum(amount)::text AS amount
       FROM reporting.daily_totals_by_zone
      WHERE zone = $1 AND day BETWEEN $2::date AND $3::date
        AND EXISTS (SELECT 1 FROM reporting.daily_totals_zones WHERE zone = $1)
      GROUP BY day, stream
     UNION ALL
     SELECT * FROM (
       SELECT (created_at AT TIME ZONE $1)::date::text, 'payments', count(*)::bigint, sum(amount)::text
         FROM reporting.payments WHERE created_at >= $4 AND created_at < $5 GROUP BY 1
       UNION ALL
       SELECT (created_at AT TIME ZONE $1)::date::text, 'transfers', count(*)::bigint, sum(amount)::text
         FROM reporting.transfers WHERE created_at >= $4 AND created_at < $5 GROUP BY 1
     ) r WHERE NOT EXISTS (SELECT 1 FROM reporting.daily_totals_zones WHERE zone = $1)`,
    [zone, first, last, range.start, range.end],
  );
  const out = new Map<string, Array<{ stream: string; records: number; amount: string }>>();
  for (const r of rows) {
    const list = out.get(r.day) ?? [];
    list.push({ stream: r.stream, records: Number(r.records), amount: r.amount });
    out.set(
      r.day,
      list.sort((a, b) => (a.stream < b.stream ? -1 : 1)),
    );
  }
  return out;
}

/** The open items of running backfills: payments windows (as instants), or a transfers scan (every day). */
async function backfillWindows(pool: Pool): Promise<Array<{ scan: boolean; start?: number; end?: number }>> {
  const { rows } = await pool.query<{ name: string; s: Date | null; e: Date | null }>(
    `SELECT i.name, i.window_start AS s, i.window_end AS e
       FROM reporting.backfill_items i JOIN reporting.backfills b ON b.id = i.backfill_id
      WHERE b.state = 'running' AND i.state IN ('queued', 'running')`,
  );
  return rows.map((r) =>
    r.name === 'scan' ? { scan: true } : { scan: false, start: r.s!.getTime(), end: r.e!.getTime() },
  );
}
