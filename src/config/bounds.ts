/**
 * What the runtime can actually do, as limits for settings and arguments. Beyond each one a value would
 * pass a plain check and break at run time: `UPSTREAM_TIMEOUT=25d` overflows Node's timer (every request
 * would time out after 1 ms), `JOB_LOCK=50d` makes BullMQ renew its lock in a tight loop,
 * `SYNC_START=2026-02-30` names no day, `SYNC_START=1970-01-01` gives a negative dateFrom. Pure functions:
 * the settings and the CLI use them.
 */

/** Node's timers take at most 2^31-1 ms (about 24.8 days); a longer delay fires after 1 ms. */
export const MAX_TIMER_MS = 2 ** 31 - 1;
/** Spans that are not timers (lookback, settle horizon) still become dates: ten years is plenty. */
export const MAX_SPAN_MS = 3_650 * 86_400_000;

/** The first day paysync syncs: windows are padded and zones run to UTC+14, and dateFrom must stay >= 0. */
export const FIRST_DAY = '1970-01-03';

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Whether `text` is a day that exists on the calendar (2026-02-30 does not). */
export function isCalendarDay(text: string): boolean {
  const m = DAY.exec(text);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const date = new Date(Date.UTC(y, mo - 1, d));
  return date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d;
}

/** The latest calendar day anywhere on Earth at `now` (UTC+14): "today" for any REPORT_TIMEZONE. */
export function latestToday(now: Date): string {
  return new Date(now.getTime() + 14 * 3_600_000).toISOString().slice(0, 10);
}

/**
 * Why `text` is not a day paysync can sync (a phrase after the setting's name), or null.
 * `allowFuture`: today's later days are refused unless set.
 */
export function dayProblem(text: string, now: Date, allowFuture = false): string | null {
  if (!DAY.test(text)) return `must be a day YYYY-MM-DD (got "${text}")`;
  if (!isCalendarDay(text)) return `${text} is not a day on the calendar`;
  if (text < FIRST_DAY) return `${text} is before ${FIRST_DAY}, the first day paysync can sync`;
  if (!allowFuture && text > latestToday(now)) return `${text} is in the future`;
  return null;
}

/** Byte sizes in settings: a whole number with an optional unit (B, KB, MB, GB; KiB… are the same). */
export function parseByteSize(text: string): number | null {
  const m = /^(\d{1,12})\s*(b|kb|kib|mb|mib|gb|gib)?$/i.exec(text.trim());
  if (!m) return null;
  const unit = (m[2] ?? 'b').toLowerCase().replace('i', '');
  const factor = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 }[unit] as number;
  return Number(m[1]) * factor;
}

/**
 * UPSTREAM_RPS: at least one request every 1,000 s (the rate gate waits out the spacing with a timer, and
 * a smaller rate once overflowed it: the process spun), at most 10,000 a second (each grant is a Redis
 * round trip; the spacing, in microseconds, must stay a whole number of at least 1).
 */
export const MIN_RPS = 0.001;
export const MAX_RPS = 10_000;
