/**
 * The status page's rules without a server: a day is shown final only when its pack is final and the
 * export's own rule still says so; the health phases use the alerts' thresholds (read from
 * ops/alerts.yml, so a changed alert fails here); every upstream-derived string is escaped; an empty
 * chart says so; a backfill without progress has no ETA.
 */
import { describe, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import type { StreamCoverage } from '../../src/reconcile/coverage.js';
import { paceOf } from '../../src/ops/status-backfills.js';
import type { CalendarDay } from '../../src/ops/status-calendar.js';
import { dayState, reconcileLabel, type DayStateInput } from '../../src/ops/status-day-state.js';
import type { StreamStatus } from '../../src/ops/status-data.js';
import {
  LAG_ALERT_FOR,
  LAG_ALERT_SECONDS,
  PHASE_TODO,
  PHASES,
  peopleDuration,
  streamHealth,
  worstPhase,
} from '../../src/ops/status-health.js';
import { renderStatusPage } from '../../src/ops/status-page.js';
import { renderChart } from '../../src/ops/status-svg.js';

const DAY = '2026-03-10';
const window = { start: new Date('2026-03-10T00:00:00Z'), end: new Date('2026-03-11T00:00:00Z') };
const covered: StreamCoverage[] = [
  { source: 'default', stream: 'payments', gap: null },
  { source: 'default', stream: 'transfers', gap: null },
];
const clean = { checkedAt: new Date('2026-03-11T02:00:00Z'), mismatches: 0, unexplained: 0, quarantined: 0 };
const base: DayStateInput = {
  day: DAY,
  window,
  now: new Date('2026-04-20T00:00:00Z'),
  horizonMs: 30 * 86_400_000,
  coverage: covered,
  openRecords: 0,
  pack: { version: 2, state: 'final', generatedAt: new Date('2026-03-11T02:05:00Z'), stateReason: '' },
  reconcile: clean,
  backfillReading: false,
  syncStart: new Date('2026-03-01T00:00:00Z'),
};

describe('a calendar day is final only by the export rule', () => {
  it('final pack, facts still final: final', () => {
    expect(dayState(base).state).toBe('final');
  });

  it('final pack, but a later reconcile found an unexplained difference: provisional, saying why', () => {
    const later = { ...clean, checkedAt: new Date('2026-03-12T00:00:00Z'), mismatches: 1, unexplained: 3 };
    const v = dayState({ ...base, reconcile: later });
    expect(v.state).toBe('provisional');
    expect(v.reason).toMatch(/pack v2 was published final, but no longer is: .*unexplained differences/);
    expect(reconcileLabel(later)).toBe('3 unexplained');
  });

  it('a provisional pack stays provisional even when the facts are final now (finance reads the pack)', () => {
    const pack = { ...base.pack!, state: 'provisional' as const };
    expect(dayState({ ...base, pack })).toMatchObject({
      state: 'provisional',
      reason: expect.stringMatching(/next export publishes it final/),
    });
  });

  it('open records before the settle horizon keep a day provisional; after it they do not', () => {
    const early = { ...base, now: new Date('2026-03-12T00:00:00Z'), openRecords: 4 };
    expect(dayState(early).state).toBe('provisional');
    expect(dayState({ ...early, now: base.now }).state).toBe('final');
  });

  it('incomplete packs, uncovered days, today and days a backfill reads', () => {
    const gap = { from: new Date('2026-03-10T06:00:00Z'), to: window.end };
    const partial: StreamCoverage[] = [{ source: 'default', stream: 'payments', gap }, covered[1]!];
    expect(dayState({ ...base, pack: { ...base.pack!, state: 'incomplete' } }).reason).toMatch(
      /sync covers it now: the next daily export restates it/,
    );
    const none = { ...base, pack: null, reconcile: null, coverage: partial };
    expect(dayState(none)).toMatchObject({
      state: 'not-synced',
      reason: expect.stringMatching(/^partly synced/),
    });
    expect(dayState({ ...none, backfillReading: true }).state).toBe('syncing');
    expect(dayState({ ...none, now: new Date('2026-03-10T12:00:00Z') }).state).toBe('syncing');
    expect(dayState({ ...base, pack: null }).state).toBe('provisional'); // covered, but no pack yet
  });

  it('a day before SYNC_START is out of range, not "not synced", and no backfill is asked for', () => {
    const gap = { from: window.start, to: window.end };
    const none: StreamCoverage[] = covered.map((c) => ({ ...c, gap }));
    const early = { ...base, pack: null, reconcile: null, coverage: none };
    const out = dayState({ ...early, syncStart: window.end }); // the day ends as live sync starts
    expect(out).toMatchObject({
      state: 'out-of-range',
      reason: expect.stringMatching(/before live sync's start/),
    });
    expect(out.reason).not.toMatch(/paysync backfill --from/);
    // the first day live sync covers is in range: missing there is "not synced", with the backfill to run
    expect(dayState({ ...early, syncStart: window.start })).toMatchObject({
      state: 'not-synced',
      reason: expect.stringMatching(/run `paysync backfill --from 2026-03-10 --to 2026-03-10`/),
    });
    // a day before it that someone backfilled and published keeps its pack's state
    expect(dayState({ ...base, syncStart: window.end }).state).toBe('final');
  });

  it('names the reconcile result in words', () => {
    expect(reconcileLabel(null)).toBe('not reconciled');
    expect(reconcileLabel(clean)).toBe('matched');
    expect(reconcileLabel({ ...clean, quarantined: 5 })).toBe('explained by 5 quarantined');
    expect(reconcileLabel({ ...clean, mismatches: 2 })).toBe('amounts differ in 2 statuses');
  });
});

const stream = (over: Partial<StreamStatus> = {}): StreamStatus => ({
  source: 'default',
  stream: 'transfers',
  checkpoint: '2026-03-10T00:00:00.000Z',
  lagSeconds: 120,
  lagFrom: 'checkpoint',
  openWindows: [],
  incompleteWindows: [],
  lastSuccessAt: '2026-03-10T00:02:00.000Z',
  lastError: null,
  lastErrorAt: null,
  lastErrorCode: null,
  everSynced: true,
  blockedDays: [],
  circuit: null,
  openRejects: 0,
  ...over,
});

const failedAfterSuccess = (code: string, message: string): Partial<StreamStatus> => ({
  lastErrorAt: '2026-03-10T00:05:00.000Z',
  lastError: `2026-03-10T00:05:00.000Z ${code}: ${message}`,
  lastErrorCode: code,
});

describe('health phases agree with the alerts', () => {
  it('uses the lag threshold and duration of PaysyncSyncLagging in ops/alerts.yml', async () => {
    const alerts = await readFile('ops/alerts.yml', 'utf8');
    const rule = /alert: PaysyncSyncLagging\n(?:.*\n)*?\s+expr: (.*)\n\s+for: (\S+)/.exec(alerts);
    expect(rule?.[1]).toMatch(new RegExp(`> ${LAG_ALERT_SECONDS}$`));
    expect(rule?.[2]).toBe(LAG_ALERT_FOR);
    expect(alerts).toMatch(/max by \(source, stream\) \(paysync_incomplete_windows\) > 0/);
  });

  it('healthy under the threshold, catching up over it, with the lag in words', () => {
    expect(streamHealth(stream({ lagSeconds: LAG_ALERT_SECONDS }))).toMatchObject({
      phase: 'healthy',
      reason: 'transfers healthy, 30 min behind',
    });
    const behind = streamHealth(stream({ lagSeconds: LAG_ALERT_SECONDS + 60 }));
    expect(behind.phase).toBe('catching up');
    expect(behind.notes.join()).toMatch(/PaysyncSyncLagging pages after 10m/);
    expect(peopleDuration(3 * 3600 + 5 * 60)).toBe('3 h 5 min');
    expect(peopleDuration(2 * 86_400 + 4 * 3600)).toBe('2 days 4 h');
  });

  it('never synced: nothing ever succeeded nor was read completely, the lag counted from the sync start', () => {
    const fresh = stream({
      checkpoint: null,
      lastSuccessAt: null,
      everSynced: false,
      lagSeconds: 30 * 86_400,
      lagFrom: 'sync start',
    });
    expect(streamHealth(fresh)).toMatchObject({
      phase: 'never synced',
      reason: 'transfers never synced, 30 days behind (nothing synced since the sync start)',
    });
    // a window of the sync log read completely counts (Redis may have lost the tick's books)
    expect(streamHealth({ ...fresh, everSynced: true }).phase).toBe('catching up');
  });

  it('down: the last tick failed on an outage-class error, whether or not anything ever synced', () => {
    for (const [code, message] of [
      ['UPSTREAM_SERVER_ERROR', 'the service answered 503 (source default, /api/transferts)'],
      ['UPSTREAM_NETWORK', 'could not reach the service: connect ECONNREFUSED 127.0.0.1:1'],
    ] as const) {
      const h = streamHealth(stream(failedAfterSuccess(code, message)));
      expect(h.phase).toBe('down');
      expect(h.reason).toContain(`the service is unreachable (2026-03-10T00:05:00.000Z ${code}: ${message})`);
      expect(h.reason).toContain('last success 2026-03-10T00:02:00.000Z');
      const never = stream({ ...failedAfterSuccess(code, message), lastSuccessAt: null, everSynced: false });
      expect(streamHealth(never)).toMatchObject({
        phase: 'down',
        reason: expect.stringMatching(/no success yet/),
      });
    }
    // the source's circuit is open: down, whatever the last tick recorded
    const open = stream({
      circuit: { since: '2026-03-10T00:04:00.000Z', lastError: 'the service answered 503' },
    });
    expect(streamHealth(open)).toMatchObject({
      phase: 'down',
      reason: expect.stringMatching(
        /circuit open since 2026-03-10T00:04:00.000Z, .*the service answered 503/,
      ),
    });
    // a window reason of the outage kind (a tick whose windows all failed unread) is an outage too
    expect(
      streamHealth(stream(failedAfterSuccess('SERVICE_UNAVAILABLE', '5 of 5 windows not complete'))).phase,
    ).toBe('down');
    // an outage that ended: a success after the error
    const recovered = stream({
      ...failedAfterSuccess('UPSTREAM_NETWORK', 'x'),
      lastSuccessAt: '2026-03-10T00:06:00.000Z',
    });
    expect(streamHealth(recovered).phase).toBe('healthy');
  });

  it('degraded: windows failing, days blocked, or the last tick failed for another reason', () => {
    const windows = ['a', 'b', 'c'].map((w) => ({
      window: w,
      detail: 'failed: HTTP 503 Service Unavailable',
    }));
    expect(streamHealth(stream({ lagSeconds: 42 * 60, incompleteWindows: windows }))).toMatchObject({
      phase: 'degraded',
      reason: 'transfers degraded, 42 min behind: 3 windows failing with 503',
    });
    expect(streamHealth(stream({ blockedDays: ['2026-03-01'] }))).toMatchObject({
      phase: 'degraded',
      reason: expect.stringMatching(/1 day blocked \(2026-03-01\)/),
    });
    const auth = stream(failedAfterSuccess('UPSTREAM_UNAUTHORIZED', 'the service refused the API key'));
    expect(streamHealth(auth)).toMatchObject({
      phase: 'degraded',
      reason: expect.stringMatching(/the last tick failed: .*UPSTREAM_UNAUTHORIZED/),
    });
    // failing windows outrank a stream that never synced: they say why
    expect(
      streamHealth(stream({ everSynced: false, lastSuccessAt: null, incompleteWindows: windows })).phase,
    ).toBe('degraded');
  });

  it('the worst phase of several, and each phase has what to do', () => {
    expect(worstPhase([])).toBe('healthy');
    expect(worstPhase(['healthy', 'catching up', 'never synced'])).toBe('never synced');
    expect(worstPhase(['degraded', 'down', 'healthy'])).toBe('down');
    for (const p of PHASES)
      expect({ p, todo: PHASE_TODO[p].length > 0 }).toEqual({ p, todo: p !== 'healthy' });
  });
});

describe('the page escapes what it did not write', () => {
  it('hostile source names, record ids, reasons and errors come out as text', () => {
    const evil = '<img src=x onerror=alert(1)>"\'&';
    const day: CalendarDay = {
      day: DAY,
      state: 'provisional',
      reason: evil,
      pack: {
        version: 1,
        state: 'provisional',
        generatedAt: new Date(),
        stateReason: evil,
        files: [{ name: evil, path: `${DAY}/v1/${evil}`, rows: 1, sha256: evil }],
        totals: [{ stream: evil, records: 1, amount: evil }],
      },
      reconcile: { ...clean, quarantined: 1 },
      recordCounts: { quarantined: 1, different: 1 },
      records: [
        {
          kind: 'quarantined',
          source: evil,
          stream: evil,
          id: evil,
          serviceStatus: null,
          warehouseStatus: null,
          serviceAmount: null,
          warehouseAmount: null,
          reason: evil,
        },
        {
          kind: 'different',
          source: evil,
          stream: evil,
          id: evil,
          serviceStatus: evil,
          warehouseStatus: evil,
          serviceAmount: evil,
          warehouseAmount: evil,
          reason: null,
        },
      ],
      totals: [{ stream: evil, records: 1, amount: evil }],
      openRecords: 0,
    };
    const now = Date.parse('2026-03-11T00:00:00Z');
    const html = renderStatusPage({
      status: {
        queue: { [evil]: 1 },
        streams: [
          stream({
            source: evil,
            lastError: evil,
            lastErrorAt: '2026-03-10T00:05:00.000Z',
            lastErrorCode: evil,
            incompleteWindows: [{ window: evil, detail: evil }],
          }),
        ],
      },
      reconcile: [],
      generatedAt: new Date(now),
      queuesPath: '/queues',
      reconcileDays: 14,
      zone: 'UTC',
      calendar: [day],
      history: {
        from: now - 86_400_000,
        to: now,
        lag: [{ name: evil, points: [{ at: now - 3_600_000, value: 3 }] }],
        records: [{ name: evil, points: [{ at: now - 3_600_000, value: 3 }] }],
        rejects: [],
        failures: [],
      },
      backfills: [
        {
          id: 1,
          sources: [evil],
          streams: [evil],
          fromDay: evil,
          toDay: evil,
          timeZone: evil,
          state: 'running',
          requestedAt: new Date(now),
          finishedAt: null,
          total: 2,
          queued: 1,
          running: 0,
          done: 0,
          failed: 1,
          cancelled: 0,
          records: 0,
          runs: 1,
          left: 1,
          startedAt: new Date(now - 60_000),
          failedItems: [{ label: evil, detail: evil }],
        },
      ],
    });
    expect(html).not.toContain('<img');
    expect(html).not.toMatch(/onerror=alert\(1\)>"/);
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;');
  });
});

describe('charts and pace', () => {
  it('an empty chart says "no data in the last 24 h" instead of a flat line', () => {
    const html = renderChart({
      id: 'c',
      title: 't',
      unit: 'u',
      kind: 'bars',
      series: [{ name: 's', points: [] }],
      from: 0,
      to: 86_400_000,
      zone: 'UTC',
    });
    expect(html).toContain('<p class="no-data">no data in the last 24 h</p>');
    expect(html).not.toContain('<svg');
  });

  it('gives an ETA only when there is a rate', () => {
    const now = new Date('2026-03-10T02:00:00Z');
    const started = new Date('2026-03-10T00:00:00Z');
    expect(paceOf({ done: 0, failed: 0, left: 10, startedAt: started, finishedAt: null }, now)).toEqual({
      perHour: null,
      etaMs: null,
    });
    expect(paceOf({ done: 4, failed: 0, left: 10, startedAt: started, finishedAt: null }, now)).toEqual({
      perHour: 2,
      etaMs: 5 * 3_600_000,
    });
  });
});
