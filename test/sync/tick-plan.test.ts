/**
 * The live tick's decisions, pure: where the live read starts and at which page size, which older days
 * are due a revisit, and where the checkpoint moves (after a read, or rebuilt from the sync log).
 */
import { describe, expect, it } from '@jest/globals';
import { parseSettings } from '../../src/config/settings.js';
import { checkpointFromLog, liveCheckpoint, planLiveRead, revisitsDue } from '../../src/sync/tick-plan.js';
import { dayWindow, windowLabel } from '../../src/sync/windows.js';

const settings = parseSettings({ REPORT_TIMEZONE: 'UTC', SYNC_LOOKBACK: '1d', SYNC_START: '2026-11-01' });
const at = (d: number, h = 0) => new Date(Date.UTC(2026, 10, d, h));
const HOUR = 3_600_000;

describe('planLiveRead', () => {
  it('reads from the checkpoint minus the lookback, in day windows up to now', () => {
    const live = planLiveRead({
      settings,
      now: at(20, 6),
      checkpoint: at(19, 12),
      hints: { transfersNewestFirst: false },
      pageSize: 100,
    });
    expect(live.from).toEqual(at(18, 12));
    expect(live.windows.map(windowLabel)).toEqual(
      [18, 19, 20].map((d) => windowLabel({ start: at(d), end: at(d + 1) })),
    );
  });

  it('never starts before SYNC_START, and starts there without a checkpoint', () => {
    const hints = { transfersNewestFirst: false };
    expect(
      planLiveRead({ settings, now: at(2, 6), checkpoint: at(1, 3), hints, pageSize: 100 }).from,
    ).toEqual(at(1));
    expect(planLiveRead({ settings, now: at(2, 6), checkpoint: null, hints, pageSize: 100 }).from).toEqual(
      at(1),
    );
  });

  it('takes a larger page the probe saw served in full, never a smaller one', () => {
    const plan = (pageSize: number) =>
      planLiveRead({
        settings,
        now: at(20),
        checkpoint: null,
        hints: { transfersNewestFirst: false, pageSize },
        pageSize: 100,
      });
    expect(plan(500).pageSize).toBe(500);
    expect(plan(50).pageSize).toBe(100);
  });
});

describe('revisitsDue', () => {
  it('revisits an unsettled day unless the live read covered it or it was read completely of late', () => {
    const fresh = new Set([`${at(16).getTime()}/${at(17).getTime()}`]);
    const covered = new Set([windowLabel(dayWindow('2026-11-18', 'UTC'))]);
    const due = revisitsDue({
      days: ['2026-11-15', '2026-11-16', '2026-11-18'],
      zone: 'UTC',
      covered,
      fresh,
    });
    expect(due).toEqual([{ start: at(15), end: at(16) }]);
  });
});

describe('liveCheckpoint', () => {
  const result = (d: number, outcome = 'complete') => ({
    window: windowLabel({ start: at(d), end: at(d + 1) }),
    outcome,
  });

  it('moves to the end of the contiguous complete windows from the first, capped at now minus the lag', () => {
    expect(liveCheckpoint([result(18), result(19), result(20, 'incomplete')], at(21), HOUR)).toEqual(at(20));
    expect(liveCheckpoint([result(18), result(19)], at(19, 12), HOUR)).toEqual(at(19, 11));
  });

  it('does not move when the first window is incomplete, or nothing was read', () => {
    expect(liveCheckpoint([result(18, 'incomplete'), result(19)], at(21), HOUR)).toBeNull();
    expect(liveCheckpoint([], at(21), HOUR)).toBeNull();
  });
});

describe('checkpointFromLog', () => {
  const logged = (from: Date, to: Date, fetchedAt: Date, kind = 'live') => ({
    windowStart: from,
    windowEnd: to,
    fetchedAt,
    outcome: 'complete',
    kind,
  });

  it('counts a window only up to its fetch time minus the lag', () => {
    expect(checkpointFromLog([logged(at(18), at(19), at(18, 10))], HOUR)).toEqual(at(18, 9));
  });

  it('ignores backfill windows: a backfill never moves the live checkpoint', () => {
    expect(checkpointFromLog([logged(at(18), at(19), at(20), 'backfill')], HOUR)).toBeNull();
    expect(
      checkpointFromLog([logged(at(18), at(19), at(20)), logged(at(19), at(20), at(21), 'backfill')], HOUR),
    ).toEqual(at(19));
  });
});
