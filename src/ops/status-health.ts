/**
 * Health at a glance, per source and stream, pure: ok, behind or failing, with the reason in words and the
 * lag in people's units. The thresholds are the alerts' (ops/alerts.yml; test/ops/status-parts.test.ts reads
 * that file and fails if they drift), so the page and the alarms never disagree about what is wrong.
 */
import type { StreamStatus } from './status-data.js';

/** PaysyncSyncLagging: `paysync_sync_lag_seconds > 1800`, for 10m. */
export const LAG_ALERT_SECONDS = 1800;
export const LAG_ALERT_FOR = '10m';
/** PaysyncIncompleteWindows: `paysync_incomplete_windows > 0`, for 1h. */
export const INCOMPLETE_ALERT_ABOVE = 0;
/** PaysyncOpenRejects: `paysync_open_rejects > 0`, for 1h (a ticket, not a page: the badge stays ok). */
export const REJECTS_ALERT_ABOVE = 0;

export type Badge = 'ok' | 'behind' | 'failing';

export interface StreamHealth {
  source: string;
  stream: string;
  badge: Badge;
  /** One line for people: "transfers 42 min behind: 3 windows failing with 503". */
  reason: string;
  lag: string;
  notes: string[];
}

/** A span in the units people say: "less than a minute", "42 min", "3 h 5 min", "2 days 4 h". */
export function peopleDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return 'less than a minute';
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 24) return min % 60 ? `${h} h ${min % 60} min` : `${h} h`;
  const d = Math.floor(h / 24);
  return `${d} day${d === 1 ? '' : 's'}${h % 24 ? ` ${h % 24} h` : ''}`;
}

/** "with 503" when the detail names an HTTP status, else its first words. */
function failingWith(detail: string): string {
  const status = /\b(429|5\d\d|4\d\d)\b/.exec(detail)?.[1];
  if (status) return `with ${status}`;
  return `(${detail.length > 100 ? `${detail.slice(0, 100)}…` : detail})`;
}

function failingNow(s: StreamStatus): boolean {
  if (!s.lastErrorAt) return false;
  return !s.lastSuccessAt || Date.parse(s.lastErrorAt) > Date.parse(s.lastSuccessAt);
}

export function streamHealth(s: StreamStatus): StreamHealth {
  const lag = s.lagSeconds === null ? 'no checkpoint yet' : `${peopleDuration(s.lagSeconds)} behind`;
  const problems: string[] = [];
  const incomplete = s.incompleteWindows.length;
  if (incomplete > INCOMPLETE_ALERT_ABOVE) {
    const first = s.incompleteWindows[0]?.detail ?? '';
    problems.push(`${incomplete} window${incomplete === 1 ? '' : 's'} failing ${failingWith(first)}`);
  }
  if (failingNow(s)) problems.push(`the last tick failed: ${s.lastError ?? ''}`);
  const behind = s.lagSeconds === null || s.lagSeconds > LAG_ALERT_SECONDS;
  const badge: Badge = problems.length > 0 ? 'failing' : behind ? 'behind' : 'ok';
  const notes: string[] = [];
  if (behind && s.lagSeconds !== null)
    notes.push(
      `over the ${LAG_ALERT_SECONDS / 60} min alert threshold (PaysyncSyncLagging pages after ${LAG_ALERT_FOR})`,
    );
  if (s.openRejects > REJECTS_ALERT_ABOVE)
    notes.push(`${s.openRejects} quarantined record${s.openRejects === 1 ? '' : 's'} with no valid copy`);
  const reason = `${s.stream} ${lag}${problems.length ? `: ${problems.join('; ')}` : ''}`;
  return { source: s.source, stream: s.stream, badge, reason, lag, notes };
}
