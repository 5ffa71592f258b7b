/**
 * Window planning (pure). Payments are read by `dateFrom`/`dateTo` windows aligned to local days in
 * REPORT_TIMEZONE, so that a day's pack, a backfill's range and the sync log speak of the same days.
 * A window is the half-open interval [start, end).
 */
import { DateTime } from 'luxon';

export interface Window {
  start: Date;
  end: Date;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** Start of a local day (YYYY-MM-DD) in `zone`, as an instant. Throws on a malformed day. */
export function startOfLocalDay(day: string, zone: string): Date {
  const dt = DAY.test(day) ? DateTime.fromISO(day, { zone }) : DateTime.invalid('bad day');
  if (!dt.isValid) throw new RangeError(`not a day YYYY-MM-DD: "${day}"`);
  return dt.startOf('day').toJSDate();
}

/** The local day (YYYY-MM-DD in `zone`) an instant falls in. */
export function localDayOf(instant: Date, zone: string): string {
  return DateTime.fromJSDate(instant, { zone }).toISODate() as string;
}

/** The window of one local day: [00:00, next day's 00:00) — 23 or 25 hours long across DST changes. */
export function dayWindow(day: string, zone: string): Window {
  const start = startOfLocalDay(day, zone);
  const end = DateTime.fromJSDate(start, { zone }).plus({ days: 1 }).startOf('day').toJSDate();
  return { start, end };
}

/** The local days from `fromDay` to `toDay`, inclusive. */
export function daysBetween(fromDay: string, toDay: string, zone: string): string[] {
  const first = DateTime.fromJSDate(startOfLocalDay(fromDay, zone), { zone });
  const last = DateTime.fromJSDate(startOfLocalDay(toDay, zone), { zone });
  if (last < first) throw new RangeError(`the range ends (${toDay}) before it starts (${fromDay})`);
  const days: string[] = [];
  for (let d = first; d <= last; d = d.plus({ days: 1 })) days.push(d.toISODate() as string);
  return days;
}

/** Day windows of an inclusive local day range. */
export function dayWindows(fromDay: string, toDay: string, zone: string): Window[] {
  return daysBetween(fromDay, toDay, zone).map((day) => dayWindow(day, zone));
}

/** Day windows covering the instants [from, to): the first starts at from's local midnight. */
export function windowsCovering(from: Date, to: Date, zone: string): Window[] {
  if (to <= from) return [];
  return dayWindows(localDayOf(from, zone), localDayOf(new Date(to.getTime() - 1), zone), zone);
}

/** Cuts a window into `parts` equal sub-windows (whole milliseconds; the last absorbs the remainder). */
export function splitWindow(window: Window, parts: number): Window[] {
  const span = window.end.getTime() - window.start.getTime();
  const n = Math.max(1, Math.min(parts, span));
  const step = Math.floor(span / n);
  const out: Window[] = [];
  for (let i = 0; i < n; i++) {
    const start = new Date(window.start.getTime() + i * step);
    const end = i === n - 1 ? window.end : new Date(window.start.getTime() + (i + 1) * step);
    out.push({ start, end });
  }
  return out;
}

/**
 * The `dateFrom`/`dateTo` (Unix seconds) of a window's request, padded on both sides.
 * Whether each bound is inclusive is an open point of the interface, and `createdAt` has milliseconds
 * while the bounds have whole seconds: flooring the start and ceiling the end, then padding, covers every
 * combination. Records that come back from the padding are loaded too (upserts make the overlap harmless).
 */
export function paddedQuery(window: Window, padMs: number): { dateFrom: number; dateTo: number } {
  return {
    dateFrom: Math.floor((window.start.getTime() - padMs) / 1000),
    dateTo: Math.ceil((window.end.getTime() + padMs) / 1000),
  };
}

/** Whether an instant lies inside a window. */
export function contains(window: Window, instant: Date): boolean {
  return instant >= window.start && instant < window.end;
}

/**
 * How many sub-windows a window should be cut into so that each stays under `maxPages` pages, given the
 * number of records the service reported for it. 1 when it already fits or nothing was reported.
 */
export function partsFor(reportedTotal: number | null, pageSize: number, maxPages: number): number {
  if (reportedTotal === null || reportedTotal <= pageSize * maxPages) return 1;
  return Math.ceil(reportedTotal / (pageSize * maxPages));
}

export function windowLabel(window: Window): string {
  return `${window.start.toISOString()}/${window.end.toISOString()}`;
}
