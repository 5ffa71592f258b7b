/** What `backfill --wait` and `--list` say, as pure functions of a backfill's progress and Redis's state. */
import { describe, expect, it } from '@jest/globals';
import { describeBackfill, progressText, waitingFor } from '../../src/cli/commands/backfill-wait.js';
import { paceFrom } from '../../src/sync/request-pace.js';
import type { BackfillSummary } from '../../src/warehouse/backfill-store.js';

const base: BackfillSummary = {
  id: 7,
  sources: ['default'],
  streams: ['payments', 'transfers'],
  fromDay: '2026-10-01',
  toDay: '2026-10-31',
  timeZone: 'UTC',
  state: 'running',
  requestedAt: new Date('2026-11-22T18:00:00Z'),
  finishedAt: null,
  total: 32,
  queued: 17,
  running: 2,
  done: 12,
  failed: 1,
  cancelled: 0,
  records: 12034,
  runs: 19,
};
const now = new Date('2026-11-22T18:10:35Z');

describe('backfill --wait says what it waits for', () => {
  it('items running and queued, and on how many workers', () => {
    expect(waitingFor(base, { unreachableSince: null, workers: 3 }, now)).toBe(
      '2 running, 17 queued on 3 worker(s)',
    );
  });

  it('no worker connected, and how to start one', () => {
    expect(waitingFor(base, { unreachableSince: null, workers: 0 }, now)).toBe(
      '2 running, 17 queued; no worker connected: start one with `paysync worker`',
    );
  });

  it('the service down (its circuit open), and that the items resume when it answers', () => {
    const down = [
      'source default: circuit open since 2026-11-22T18:09:00.000Z after 12 failed attempts in a row',
    ];
    expect(waitingFor(base, { unreachableSince: null, workers: 2, down }, now)).toBe(
      '2 running, 17 queued; the service is down, items wait and resume when it answers: ' + down[0],
    );
  });

  it('Redis unreachable, since when and for how long', () => {
    const since = new Date('2026-11-22T18:10:00Z');
    expect(waitingFor(base, { unreachableSince: since, workers: null }, now)).toBe(
      'Redis unreachable since 2026-11-22T18:10:00.000Z (35s); workers re-queue this backfill from PostgreSQL when it is back',
    );
  });
});

describe('backfill --list', () => {
  it('shows progress, failures and re-runs after crashes', () => {
    expect(describeBackfill(base)).toBe(
      '#7 running 2026-10-01 → 2026-10-31 (UTC) payments+transfers of default: 12/32 windows done, 1 failed, 2 running, 17 queued; ' +
        '12034 records; 4 re-run(s) after crashes or retries; requested 2026-11-22T18:00:00.000Z',
    );
  });
});

describe('backfill --wait shows where the limit is', () => {
  const wait = '2 running, 17 queued on 1 worker(s)';

  it('windows and records apart, the request rate against the ceiling and the service latency', () => {
    const pace = paceFrom(
      { 's:99': '19', 's:100': '20', 's:101': '19', latency: '152.4', latencyAt: '101' },
      102,
      'default',
      20,
    );
    expect(pace).toEqual({ source: 'default', perSecond: 58 / 3, ceiling: 20, latencyMs: 152.4 });
    expect(progressText(base, { pace: [pace] }, wait)).toBe(
      'windows, 12034 records; 19.3 of 20 req/s (at UPSTREAM_RPS), the service answers in 152 ms; ' +
        wait +
        ';',
    );
  });

  it('below the ceiling it says so by the numbers; several sources each by name', () => {
    const slow = paceFrom(
      { 's:95': '9', 's:96': '10', 's:102': '4', latency: '480', latencyAt: '100' },
      102,
      'a',
      20,
    );
    const idle = paceFrom({}, 102, 'b', 20);
    expect(slow.perSecond).toBeCloseTo(19 / 7);
    expect(idle).toEqual({ source: 'b', perSecond: 0, ceiling: 20, latencyMs: null });
    expect(progressText(base, { pace: [slow, idle] }, wait)).toBe(
      'windows, 12034 records; a 2.7 of 20 req/s, the service answers in 480 ms; b 0.0 of 20 req/s; ' +
        wait +
        ';',
    );
  });

  it('counts complete seconds only (the current one is still filling) and forgets a stale latency', () => {
    const pace = paceFrom({ 's:200': '5', 's:190': '50', latency: '100', latencyAt: '130' }, 200, 's', 10);
    expect(pace.perSecond).toBe(5); // second 190 alone, over the 10 seconds since it began
    expect(pace.latencyMs).toBeNull();
  });
});
