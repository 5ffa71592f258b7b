/**
 * Times no record can truly have (principle 8: impossible values are quarantined, never frozen in). A
 * `createdAt` or `updatedAt` later than the worker's clock plus FUTURE_TOLERANCE, or earlier than
 * 2000-01-01, would be stored and then, by the forward-only upsert, refuse the service's later, true
 * state for ever. Such a record is quarantined with its reason (it counts as listed, so its window can
 * complete); its day is read again while the reject is open (warehouse/sync-log.ts `nonFinalDays`), so
 * the record lands when the service sends it with a possible time. Pure.
 */
import type { TimeCheck } from '../upstream/schemas.js';
import { humanDuration } from '../config/duration.js';

/** No record of this service predates this instant. */
export const EARLIEST_RECORD_MS = Date.UTC(2000, 0, 1);

/** How a reject's reason starts, so the revisit query can find the days holding such rejects. */
export const IMPOSSIBLE_TIME_REASON = 'impossible timestamp';

/** The problem with a record's times, or null when both are possible at `nowMs`. */
export function impossibleTime(
  times: { createdAt: string; updatedAt: string },
  nowMs: number,
  toleranceMs: number,
): string | null {
  for (const field of ['createdAt', 'updatedAt'] as const) {
    const text = times[field];
    const t = Date.parse(text);
    if (Number.isNaN(t)) continue; // the schema speaks of unreadable times
    if (t > nowMs + toleranceMs)
      return (
        `${IMPOSSIBLE_TIME_REASON}: ${field} ${text} is later than the worker's clock plus FUTURE_TOLERANCE ` +
        `(${humanDuration(toleranceMs)}); quarantined and read again later`
      );
    if (t < EARLIEST_RECORD_MS)
      return `${IMPOSSIBLE_TIME_REASON}: ${field} ${text} is before 2000-01-01; quarantined and read again later`;
  }
  return null;
}

/** The check the validators take, at one instant of the sync clock. */
export function timeCheck(now: Date, toleranceMs: number): TimeCheck {
  const nowMs = now.getTime();
  return (times) => impossibleTime(times, nowMs, toleranceMs);
}

/** Whether a reject's reason is an impossible time's. */
export const isImpossibleTimeReason = (reason: string): boolean => reason.startsWith(IMPOSSIBLE_TIME_REASON);
