/**
 * Everything the status page shows beyond `paysync status`'s data, gathered at once: the calendar of days,
 * the last 24 hours, the backfills. Reads PostgreSQL and the queue; never writes.
 */
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Pool } from 'pg';
import type { Settings } from '../config/settings.js';
import { readRequestPace } from '../sync/request-pace.js';
import { syncStart } from '../sync/tick-plan.js';
import { gatherBackfills, type BackfillView } from './status-backfills.js';
import { recordChanges, type SightingList } from './status-fields.js';
import { gatherCalendar, type CalendarDay } from './status-calendar.js';
import type { StatusData } from './status-data.js';
import { gatherHistory, type History } from './status-history.js';

export interface StatusPageExtras {
  zone: string;
  calendar: CalendarDay[];
  history: History;
  backfills: BackfillView[];
  /** The service's records changed shape: sightings not yet acknowledged (status-fields.ts). */
  recordChanges: SightingList;
}

export interface StatusPageDeps {
  pool: Pool;
  queue: Pick<Queue, 'getJobs'>;
  settings: Pick<
    Settings,
    | 'sources'
    | 'REPORT_TIMEZONE'
    | 'SETTLE_LAG'
    | 'SETTLE_HORIZON'
    | 'SYNC_START'
    | 'PAYSYNC_QUEUE_PREFIX'
    | 'UPSTREAM_RPS'
  >;
  now: () => Date;
  /** Where the rate gate keeps each source's pace (request-pace.ts); without it no pace is shown. */
  redis?: Redis;
}

/** Running backfills get their sources' pace at the service: requests per second against the ceiling. */
async function withPace(deps: StatusPageDeps, backfills: BackfillView[]): Promise<BackfillView[]> {
  const { redis, settings } = deps;
  if (!redis || !backfills.some((b) => b.state === 'running')) return backfills;
  const pace = await Promise.all(
    settings.sources.map((s) =>
      readRequestPace(redis, settings.PAYSYNC_QUEUE_PREFIX, s.name, settings.UPSTREAM_RPS),
    ),
  ).catch(() => null); // Redis unreachable: the page shows the rest, the health section says why
  if (!pace) return backfills;
  return backfills.map((b) =>
    b.state === 'running' ? { ...b, pace: pace.filter((p) => b.sources.includes(p.source)) } : b,
  );
}

export async function gatherStatusPage(deps: StatusPageDeps, status: StatusData): Promise<StatusPageExtras> {
  const now = deps.now();
  const s = deps.settings;
  const [calendar, history, backfills, changes] = await Promise.all([
    gatherCalendar(
      deps.pool,
      {
        sources: s.sources.map((x) => x.name),
        zone: s.REPORT_TIMEZONE,
        settleLagMs: s.SETTLE_LAG,
        horizonMs: s.SETTLE_HORIZON,
        syncStart: syncStart(s, now),
      },
      now,
    ),
    gatherHistory({ pool: deps.pool, queue: deps.queue, settleLagMs: s.SETTLE_LAG }, status.streams, now),
    gatherBackfills(deps.pool, now).then((list) => withPace(deps, list)),
    recordChanges(deps.pool),
  ]);
  return { zone: s.REPORT_TIMEZONE, calendar, history, backfills, recordChanges: changes };
}
