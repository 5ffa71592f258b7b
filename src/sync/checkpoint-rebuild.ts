/**
 * Rebuilding a lost checkpoint from the warehouse's durable sync log (docs/architecture.md, principle 4:
 * Redis is fast, Postgres is durable). Pure: the caller reads the log and writes the result back.
 */

export interface LoggedWindow {
  windowStart: Date;
  windowEnd: Date;
  /** Only `complete` counts; `incomplete`, `failed` or anything else proves nothing about the range. */
  outcome: string;
}

/**
 * The checkpoint implied by the durable log: the end of the contiguous run of completed windows starting
 * at `start`. Windows cover [windowStart, windowEnd); they may overlap, be split into sub-windows, arrive
 * in any order, or repeat a range that failed earlier (only the complete runs count). The run grows while
 * some complete window starts at or before its current end and ends after it; a gap or a range covered
 * only by incomplete windows ends it. Returns null when no complete window covers `start` itself.
 */
export function contiguousEnd(start: Date, windows: ReadonlyArray<LoggedWindow>): Date | null {
  const from = start.getTime();
  if (Number.isNaN(from)) return null;
  const complete = windows
    .filter((w) => w.outcome === 'complete')
    .map((w) => ({ start: w.windowStart.getTime(), end: w.windowEnd.getTime() }))
    .filter((w) => !Number.isNaN(w.start) && !Number.isNaN(w.end) && w.end > w.start)
    .sort((a, b) => a.start - b.start);
  let end = from;
  for (const w of complete) {
    // Sorted by start: once one starts beyond the run's end, every later one does too (a gap).
    if (w.start > end) break;
    if (w.end > end) end = w.end;
  }
  return end > from ? new Date(end) : null;
}
