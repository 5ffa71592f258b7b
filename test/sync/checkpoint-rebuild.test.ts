/**
 * A lost checkpoint is rebuilt from the sync log: only a contiguous run of completed windows from the
 * start may move it, however the windows were split, overlapped, ordered or retried.
 */
import { describe, expect, it } from '@jest/globals';
import { contiguousEnd, type LoggedWindow } from '../../src/sync/checkpoint-rebuild.js';

const day = (d: number, h = 0) => new Date(Date.UTC(2026, 10, d, h));
const w = (from: Date, to: Date, outcome = 'complete'): LoggedWindow => ({
  windowStart: from,
  windowEnd: to,
  outcome,
});
const start = day(20);

describe('contiguousEnd', () => {
  it('is null for an empty log', () => {
    expect(contiguousEnd(start, [])).toBeNull();
  });

  it('follows consecutive complete days to the end of the last one', () => {
    expect(contiguousEnd(start, [w(day(20), day(21)), w(day(21), day(22)), w(day(22), day(23))])).toEqual(
      day(23),
    );
  });

  it('stops at a gap, ignoring complete windows beyond it', () => {
    expect(contiguousEnd(start, [w(day(20), day(21)), w(day(22), day(23))])).toEqual(day(21));
  });

  it('is null when the first window at start is not complete', () => {
    expect(contiguousEnd(start, [w(day(20), day(21), 'incomplete'), w(day(21), day(22))])).toBeNull();
    expect(contiguousEnd(start, [w(day(20), day(21), 'failed')])).toBeNull();
  });

  it('is null when the log only begins after start', () => {
    expect(contiguousEnd(start, [w(day(21), day(22))])).toBeNull();
  });

  it('stops before an incomplete window in the middle', () => {
    const log = [w(day(20), day(21)), w(day(21), day(22), 'incomplete'), w(day(22), day(23))];
    expect(contiguousEnd(start, log)).toEqual(day(21));
  });

  it('is not cut by an incomplete window inside a range complete windows cover', () => {
    const log = [w(day(20), day(22)), w(day(21), day(22), 'incomplete'), w(day(22), day(23))];
    expect(contiguousEnd(start, log)).toEqual(day(23));
  });

  it('lets a later complete run of a failed range close the gap', () => {
    const log = [
      w(day(20), day(21)),
      w(day(21), day(22), 'failed'),
      w(day(22), day(23)),
      w(day(21), day(22)), // the retry succeeded
    ];
    expect(contiguousEnd(start, log)).toEqual(day(23));
  });

  it('bridges overlapping windows (padded reads)', () => {
    const log = [w(day(19, 23), day(21, 1)), w(day(20, 23), day(22, 1)), w(day(21, 23), day(23))];
    expect(contiguousEnd(start, log)).toEqual(day(23));
  });

  it('joins sub-windows a window was split into', () => {
    const log = [w(day(20, 0), day(20, 6)), w(day(20, 6), day(20, 12)), w(day(20, 12), day(21))];
    expect(contiguousEnd(start, log)).toEqual(day(21));
  });

  it('stops inside a day when one of its sub-windows is missing', () => {
    const log = [w(day(20, 0), day(20, 6)), w(day(20, 12), day(21))];
    expect(contiguousEnd(start, log)).toEqual(day(20, 6));
  });

  it('reads the log in any order', () => {
    const log = [w(day(22), day(23)), w(day(20, 12), day(21)), w(day(21), day(22)), w(day(20), day(20, 12))];
    expect(contiguousEnd(start, log)).toEqual(day(23));
  });

  it('is not shortened by a window nested inside a longer one', () => {
    const log = [w(day(20), day(23)), w(day(21), day(22))];
    expect(contiguousEnd(start, log)).toEqual(day(23));
  });

  it('counts a complete window that began before start and covers it', () => {
    expect(contiguousEnd(start, [w(day(19), day(20, 12)), w(day(20, 12), day(21))])).toEqual(day(21));
  });

  it('ignores windows ending at or before start and empty windows', () => {
    const log = [w(day(18), day(20)), w(day(20), day(20)), w(day(20), day(21))];
    expect(contiguousEnd(start, log)).toEqual(day(21));
    expect(contiguousEnd(start, [w(day(18), day(20)), w(day(20), day(20))])).toBeNull();
  });

  it('skips windows with invalid dates instead of trusting them', () => {
    const log = [w(day(20), day(21)), w(new Date(Number.NaN), day(25))];
    expect(contiguousEnd(start, log)).toEqual(day(21));
  });
});
