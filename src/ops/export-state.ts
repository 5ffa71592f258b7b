/**
 * The daily packs as /metrics shows them, read from PostgreSQL at scrape time (so every worker serves the
 * same, and a restart forgets nothing): each recent day's latest version, whether it is `incomplete`, and
 * the days that should have a pack by now and have none (the daily job could not write it: a full disk, a
 * tampered pack, no worker running at EXPORT_AT). The alerts PaysyncDayIncomplete and PaysyncDayNotExported
 * (ops/alerts.yml) read these.
 */
import { DateTime } from 'luxon';
import type { Pool } from 'pg';
import type { Settings } from '../config/settings.js';
import { EXPORT_GRACE_MS } from '../reconcile/daily-export.js';
import { syncStart } from '../sync/tick-plan.js';
import { dayWindow, daysBetween, localDayOf } from '../sync/windows.js';

export interface DayExport {
  day: string;
  version: number;
  at: Date;
  incomplete: boolean;
}

export interface ExportState {
  days: DayExport[];
  /** Days whose pack is due and missing, oldest first. */
  missing: string[];
}

type ExportSettings = Pick<Settings, 'REPORT_TIMEZONE' | 'EXPORT_AT' | 'SYNC_START'>;

/**
 * When the daily job publishes `day`'s pack at the latest: at EXPORT_AT on the next local day if sync
 * covers the day by then, else once EXPORT_GRACE has passed since the day ended (published `incomplete`),
 * whichever is later.
 */
export function packDueAt(day: string, zone: string, exportAt: string): Date {
  const end = dayWindow(day, zone).end;
  const [hour, minute] = exportAt.split(':').map(Number);
  const at = DateTime.fromJSDate(end, { zone }).set({ hour, minute, second: 0, millisecond: 0 });
  return new Date(Math.max(at.toMillis(), end.getTime() + EXPORT_GRACE_MS));
}

/**
 * The days of the last `keepDays` whose pack is due by `now`: those that ended after paysync first read
 * anything (`firstRunAt`; null: it never did, and nothing is due) and not before live sync starts
 * (SYNC_START: days before it are out of range).
 */
export function daysDue(i: {
  now: Date;
  settings: ExportSettings;
  firstRunAt: Date | null;
  keepDays: number;
}): string[] {
  if (!i.firstRunAt) return [];
  const zone = i.settings.REPORT_TIMEZONE;
  const today = localDayOf(i.now, zone);
  const from = DateTime.fromISO(today, { zone }).minus({ days: i.keepDays }).toISODate() as string;
  const start = localDayOf(syncStart(i.settings, i.now), zone);
  const first = [from, start].sort().at(-1) as string;
  if (first >= today) return [];
  const yesterday = DateTime.fromISO(today, { zone }).minus({ days: 1 }).toISODate() as string;
  return daysBetween(first, yesterday, zone).filter(
    (day) =>
      dayWindow(day, zone).end > (i.firstRunAt as Date) &&
      packDueAt(day, zone, i.settings.EXPORT_AT) <= i.now,
  );
}

type VersionRow = { day: string; version: number; generated_at: Date; state: string };

export async function gatherExports(
  pool: Pool,
  settings: ExportSettings,
  now: Date,
  keepDays: number,
): Promise<ExportState> {
  const zone = settings.REPORT_TIMEZONE;
  const since = DateTime.fromJSDate(now, { zone }).minus({ days: keepDays }).toISODate() as string;
  const [versions, first] = await Promise.all([
    pool.query<VersionRow>(
      `SELECT DISTINCT ON (day) day::text AS day, version, generated_at, state
         FROM reporting.export_versions WHERE day >= $1::date ORDER BY day, version DESC`,
      [since],
    ),
    pool.query<{ at: Date | null }>(`SELECT min(first_fetched_at) AS at FROM reporting.sync_windows`),
  ]);
  const days = versions.rows.map((r) => ({
    day: r.day,
    version: r.version,
    at: r.generated_at,
    incomplete: r.state === 'incomplete',
  }));
  const published = new Set(days.map((d) => d.day));
  const due = daysDue({ now, settings, firstRunAt: first.rows[0]?.at ?? null, keepDays });
  return { days, missing: due.filter((d) => !published.has(d)) };
}
