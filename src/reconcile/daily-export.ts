/**
 * The daily export job (EXPORT_AT in REPORT_TIMEZONE): yesterday's pack, then every earlier day inside
 * SETTLE_HORIZON that already has a pack and whose records changed since its latest version (found in SQL
 * against the version's snapshot, so unchanged days cost one query and write nothing), restated.
 *
 * Each day is reconciled just before it is published, healing what a re-read can heal (heal.ts), so the
 * manifest's reconcile result and the day's state are never stale; a difference that survives is logged
 * as a warning (and shows in /metrics, `status` and the status page, from the recorded result). Yesterday is published only once sync covers it: until then the job asks to be
 * run again later (`retryAt`), and once EXPORT_GRACE has passed since the day ended it publishes the day
 * marked `incomplete`, with a warning in the log and the paysync_export_incomplete gauge, rather than
 * leave finance without a pack. A reconcile that cannot reach the service is waited for the same way
 * (after the grace period the day is published with the last recorded reconcile, whose time the
 * manifest shows); a restated day whose reconcile cannot run is left for the next run. A day published
 * `incomplete` is looked at again every run, and restated once sync covers it.
 */
import { DateTime } from 'luxon';
import type { Runtime } from '../sync/services.js';
import { dayWindow, localDayOf } from '../sync/windows.js';
import { dayCoverage, describeGaps } from './coverage.js';
import { exportDay, type ExportResult } from './export-day.js';
import { reconcileAndHeal } from './heal.js';
import { ReconcileUnreachableError } from './reconcile.js';
import { changedSinceLastVersion, publishedDaysSince } from './restatement.js';

/** How long after its end a day may wait for sync before it is published `incomplete`. */
export const EXPORT_GRACE_MS = 6 * 3_600_000;
/** How often the job looks again while yesterday is not covered. */
export const COVERAGE_RETRY_MS = 10 * 60_000;

export interface DailyExportReport {
  /** Yesterday's pack, or null while it waits for sync to cover the day (see retryAt). */
  yesterday: ExportResult | null;
  /** When to run the job again: yesterday is not covered yet and the grace period has not passed. */
  retryAt: Date | null;
  restated: ExportResult[];
}

function shiftDay(day: string, days: number, zone: string): string {
  return DateTime.fromISO(day, { zone }).plus({ days }).toISODate() as string;
}

export async function runDailyExport(runtime: Runtime, now: Date = new Date()): Promise<DailyExportReport> {
  const zone = runtime.settings.REPORT_TIMEZONE;
  const yesterday = shiftDay(localDayOf(now, zone), -1, zone);
  const { first, retryAt } = await publishYesterday(runtime, yesterday, now);
  const horizonStart = localDayOf(new Date(now.getTime() - runtime.settings.SETTLE_HORIZON), zone);
  const restated: ExportResult[] = [];
  const incomplete = new Set(await incompleteDaysSince(runtime, horizonStart));
  for (const day of await publishedDaysSince(runtime.pool, horizonStart)) {
    if (day === yesterday) continue;
    const w = dayWindow(day, zone);
    // a day published incomplete is looked at again each day: sync may cover it now
    const changed = await changedSinceLastVersion(runtime.pool, [w.start, w.end], day);
    if (!changed && !incomplete.has(day)) continue;
    if (!(await reconcileBeforePublishing(runtime, day, now))) continue; // the next run restates it
    const written = await restateUnlessTampered(runtime, day, now);
    if (written) restated.push(written);
  }
  return { yesterday: first, retryAt, restated };
}

/**
 * A restatement, unless the day's published pack on disk is not as published: that day is left as it is
 * (an error in the log naming the files, and `paysync verify` names them too) and the other days go on.
 */
async function restateUnlessTampered(runtime: Runtime, day: string, now: Date): Promise<ExportResult | null> {
  try {
    return await exportDay(runtime, day, { now, allowIncomplete: true });
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code !== 'PACK_ON_DISK' && code !== 'PACK_MANIFEST_INVALID') throw error;
    runtime.log.error(
      { day, error: (error as Error).message },
      'daily pack: the published pack is not as published; not restated',
    );
    return null;
  }
}

/** Days from `fromDay` whose latest published version is `incomplete`. */
async function incompleteDaysSince(runtime: Runtime, fromDay: string): Promise<string[]> {
  const { rows } = await runtime.pool.query<{ day: string }>(
    `SELECT day::text AS day FROM (
       SELECT DISTINCT ON (day) day, state FROM reporting.export_versions
        WHERE day >= $1::date ORDER BY day, version DESC) latest
      WHERE state = 'incomplete'`,
    [fromDay],
  );
  return rows.map((r) => r.day);
}

async function publishYesterday(
  runtime: Runtime,
  day: string,
  now: Date,
): Promise<{ first: ExportResult | null; retryAt: Date | null }> {
  const w = dayWindow(day, runtime.settings.REPORT_TIMEZONE);
  const sources = runtime.settings.sources.map((s) => s.name);
  const gaps = describeGaps(await dayCoverage(runtime.pool, sources, w, runtime.settings.SETTLE_LAG));
  const graceEnd = w.end.getTime() + EXPORT_GRACE_MS;
  const retryAt = new Date(Math.min(now.getTime() + COVERAGE_RETRY_MS, graceEnd));
  if (!gaps) {
    const reconciled = await reconcileBeforePublishing(runtime, day, now);
    // the service cannot be reached: wait for it until the grace period ends, then publish with what is known
    if (!reconciled && now.getTime() < graceEnd) return { first: null, retryAt };
    return { first: await exportDay(runtime, day, { now }), retryAt: null };
  }
  if (now.getTime() < graceEnd) {
    runtime.log.info({ day, notCovered: gaps }, 'daily pack waits: sync does not cover the day yet');
    return { first: null, retryAt };
  }
  const first = await exportDay(runtime, day, { now, allowIncomplete: true });
  runtime.log.warn(
    { day, version: first.version, notCovered: gaps },
    'daily pack published INCOMPLETE: sync still does not cover the day after the grace period',
  );
  return { first, retryAt: null };
}

/**
 * The day healed and reconciled; a surviving difference is a warning naming its records. False when the
 * service could not be reached (said in the log; nothing recorded): the caller tries again later.
 */
async function reconcileBeforePublishing(runtime: Runtime, day: string, now: Date): Promise<boolean> {
  let healed: Awaited<ReturnType<typeof reconcileAndHeal>>;
  try {
    healed = await reconcileAndHeal(runtime, day, { now, refreshPack: false });
  } catch (error) {
    if (!(error instanceof ReconcileUnreachableError)) throw error;
    runtime.log.warn(
      { day, error: error.message },
      'reconcile: the service cannot be reached; retrying later',
    );
    return false;
  }
  const { result, rereads } = healed;
  if (result.mismatches === 0) return true;
  const named = result.differences.filter((d) => d.kind !== 'quarantined');
  runtime.log.warn(
    {
      day,
      mismatches: result.mismatches,
      rereads,
      records: named.length,
      first: named.slice(0, 20).map((d) => `${d.source}/${d.stream} ${d.id ?? '(no id)'} ${d.kind}`),
    },
    'reconcile: differences survive re-reading; the day is published provisional with differences.csv',
  );
  return true;
}
