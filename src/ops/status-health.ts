/**
 * The health phase of each source and stream, decided once, here, as a pure function of the facts
 * status-data.ts gathers: `paysync status`, the status page and /metrics (the phase gauge) all call
 * `streamHealth` on the same facts, so they cannot disagree.
 *
 * | phase        | when                                                                        |
 * |--------------|-----------------------------------------------------------------------------|
 * | down         | the service is unreachable: the source's circuit is open, or the last tick   |
 * |              | failed on an outage (5xx, timeout, reset, refused: window-reasons.ts) and    |
 * |              | nothing succeeded since                                                      |
 * | degraded     | some windows are failing (recorded incomplete or failed and not read         |
 * |              | complete since), days are blocked, or the last tick failed otherwise         |
 * | never synced | no tick ever succeeded and no window was ever read completely               |
 * | catching up  | working, but the lag is over the lag alert's threshold                       |
 * | healthy      | working, within the threshold                                                |
 *
 * The thresholds are the alerts' (ops/alerts.yml; test/ops/status-parts.test.ts reads that file and fails
 * if they drift), so the page and the alarms never disagree about what is wrong.
 */
import { isOutage, reasonOfError } from '../sync/window-reasons.js';
import type { StreamStatus } from './status-data.js';

/** PaysyncSyncLagging: `paysync_sync_lag_seconds > 1800`, for 10m. */
export const LAG_ALERT_SECONDS = 1800;
export const LAG_ALERT_FOR = '10m';
/** PaysyncIncompleteWindows: `paysync_incomplete_windows > 0`, for 1h. */
export const INCOMPLETE_ALERT_ABOVE = 0;
/** PaysyncOpenRejects: `paysync_open_rejects > 0`, for 1h (a ticket, not a page: the phase stays healthy). */
export const REJECTS_ALERT_ABOVE = 0;

/** The phases, best first. */
export const PHASES = ['healthy', 'catching up', 'never synced', 'degraded', 'down'] as const;
export type Phase = (typeof PHASES)[number];

/**
 * Whether a recorded error code says the service cannot be reached or will not answer: an outage, which no
 * paysync restart fixes. The code is a window reason (a tick whose windows all failed for outage reasons
 * records the first one's) or an error code (a tick that threw); window-reasons.ts decides both. Any other
 * failure (401, 403, 400, a short window) is the key's or the data's, and degrades rather than downs.
 */
export function isOutageCode(code: string | null): boolean {
  return code !== null && (isOutage(code) || isOutage(reasonOfError({ code })));
}

/** What ops should do in each phase (the status page, `paysync status` and docs/operations.md say it). */
export const PHASE_TODO: Record<Phase, string> = {
  healthy: '',
  'catching up': 'nothing: each tick reads more of the backlog and the lag falls',
  'never synced':
    'start `paysync worker` (or run `paysync sync --once`); if one runs, its log says why no tick succeeds',
  degraded:
    '`paysync status` lists the failing windows with why; once the cause is fixed, the next ticks or a `paysync backfill` of their days read them again',
  down: 'check the service (its base URL, its own status): paysync retries by itself, and restarting it does not help',
};

export interface StreamHealth {
  source: string;
  stream: string;
  phase: Phase;
  /** One line for people: "payments down: the service answered 503 (…); nothing synced since …". */
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

/** A phase as a label value or CSS class: `never_synced`, `catching_up`, `healthy`, … */
export function phaseSlug(phase: Phase): string {
  return phase.replace(' ', '_');
}

/** The worst of several phases (healthy for none). */
export function worstPhase(phases: Iterable<Phase>): Phase {
  let worst: Phase = 'healthy';
  for (const p of phases) if (PHASES.indexOf(p) > PHASES.indexOf(worst)) worst = p;
  return worst;
}

/** "with 503" when the detail names an HTTP status, else its first words. */
function failingWith(detail: string): string {
  const status = /\b(429|5\d\d|4\d\d)\b/.exec(detail)?.[1];
  if (status) return `with ${status}`;
  return `(${detail.length > 100 ? `${detail.slice(0, 100)}…` : detail})`;
}

/** The last tick failed, and nothing succeeded after it. */
function failingNow(s: StreamStatus): boolean {
  if (!s.lastErrorAt) return false;
  return !s.lastSuccessAt || Date.parse(s.lastErrorAt) > Date.parse(s.lastSuccessAt);
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function decidePhase(s: StreamStatus): Phase {
  const failing = failingNow(s);
  if (s.circuit || (failing && isOutageCode(s.lastErrorCode))) return 'down';
  if (failing || s.incompleteWindows.length > INCOMPLETE_ALERT_ABOVE || s.blockedDays.length > 0)
    return 'degraded';
  if (!s.everSynced) return 'never synced';
  if (s.lagSeconds !== null && s.lagSeconds > LAG_ALERT_SECONDS) return 'catching up';
  return 'healthy';
}

function lagWords(s: StreamStatus): string {
  if (s.lagSeconds === null) return 'no checkpoint yet';
  const behind = `${peopleDuration(s.lagSeconds)} behind`;
  return s.lagFrom === 'sync start' ? `${behind} (nothing synced since the sync start)` : behind;
}

/** What went wrong, in words, for the phases that have a problem. */
function problems(s: StreamStatus, phase: Phase): string[] {
  const out: string[] = [];
  if (phase === 'down') {
    const success = s.lastSuccessAt ? `last success ${s.lastSuccessAt}` : 'no success yet';
    const why = s.circuit
      ? `circuit open since ${s.circuit.since ?? 'unknown'}, one probe per tick (last: ${s.circuit.lastError ?? 'unknown'})`
      : (s.lastError ?? s.lastErrorCode ?? 'no detail');
    out.push(`the service is unreachable (${why}); ${success}`);
    return out;
  }
  const incomplete = s.incompleteWindows.length;
  if (incomplete > INCOMPLETE_ALERT_ABOVE) {
    const first = s.incompleteWindows[0]?.detail ?? '';
    out.push(`${plural(incomplete, 'window')} failing ${failingWith(first)}`);
  }
  if (s.blockedDays.length > 0)
    out.push(`${plural(s.blockedDays.length, 'day')} blocked (${s.blockedDays.slice(0, 3).join(', ')})`);
  if (failingNow(s)) out.push(`the last tick failed: ${s.lastError ?? ''}`);
  return out;
}

/** The phase of one source and stream, its reason in words, and the notes beside it. */
export function streamHealth(s: StreamStatus): StreamHealth {
  const phase = decidePhase(s);
  const lag = lagWords(s);
  const found = problems(s, phase);
  const notes: string[] = [];
  if (s.lagSeconds !== null && s.lagSeconds > LAG_ALERT_SECONDS)
    notes.push(
      `over the ${LAG_ALERT_SECONDS / 60} min alert threshold (PaysyncSyncLagging pages after ${LAG_ALERT_FOR})`,
    );
  if (s.openRejects > REJECTS_ALERT_ABOVE)
    notes.push(`${plural(s.openRejects, 'quarantined record')} with no valid copy`);
  if (phase === 'never synced' && s.openWindows.length > 0)
    notes.push(`a first tick is reading ${plural(s.openWindows.length, 'window')}`);
  const reason = `${s.stream} ${phase}, ${lag}${found.length ? `: ${found.join('; ')}` : ''}`;
  return { source: s.source, stream: s.stream, phase, reason, lag, notes };
}
