/**
 * paysync's own status page (HTML, no script), a pure renderer: data in, HTML out. From the top: health
 * per source and stream (its phase: healthy, catching up, never synced, degraded, down; the reason in words
 * and what to do), the calendar of the last days
 * (status-calendar-html.ts), the last 24 hours as charts (status-svg.ts), running and recent backfills,
 * the detailed stream table, the queue counts with a link to the queue dashboard, and the last days'
 * reconcile runs. Every string that comes from outside paysync's code (source names, record fields, error
 * messages, the service's statuses) is escaped.
 */
import { humanDuration } from '../config/duration.js';
import { escapeHtml } from './html.js';
import type { ReconcileRow } from './reconcile-results.js';
import { describePace } from '../sync/request-pace.js';
import { paceOf, type BackfillView } from './status-backfills.js';
import type { CalendarDay } from './status-calendar.js';
import { renderCalendar } from './status-calendar-html.js';
import { recordChangesSection, type SightingList } from './status-fields.js';
import type { StatusData, StreamStatus } from './status-data.js';
import { PHASE_TODO, peopleDuration, phaseSlug, streamHealth } from './status-health.js';
import type { History } from './status-history.js';
import { renderChart } from './status-svg.js';

export { escapeHtml } from './html.js';

export interface StatusPageInput {
  status: StatusData;
  reconcile: ReconcileRow[];
  generatedAt: Date;
  queuesPath: string;
  reconcileDays: number;
  /** REPORT_TIMEZONE: the calendar's days and the charts' hours. */
  zone?: string;
  calendar?: CalendarDay[];
  history?: History;
  backfills?: BackfillView[];
  /** The service's records changed shape: sightings not yet acknowledged. */
  recordChanges?: SightingList;
  /** Many sources: the summary of all of them and the links to each page (status-paging.ts), as HTML. */
  paging?: string;
}

function table(headers: string[], rows: string[][], cls = ''): string {
  const head = headers.map((h) => `<th>${escapeHtml(h)}</th>`).join('');
  const body = rows.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('\n');
  return `<table class="${cls}"><thead><tr>${head}</tr></thead><tbody>\n${body}\n</tbody></table>`;
}

function windowList(windows: string[]): string {
  return windows.length ? `<ul>${windows.map((w) => `<li>${escapeHtml(w)}</li>`).join('')}</ul>` : '0';
}

function streamRow(s: StreamStatus): string[] {
  const incomplete = s.incompleteWindows.map((w) => `${w.window}: ${w.detail}`);
  return [
    escapeHtml(s.source),
    escapeHtml(s.stream),
    escapeHtml(s.checkpoint ?? 'none yet'),
    s.lagSeconds === null ? '-' : escapeHtml(humanDuration(s.lagSeconds * 1000)),
    windowList(s.openWindows),
    `<span class="${incomplete.length ? 'bad' : ''}">${windowList(incomplete)}</span>`,
    escapeHtml(s.lastSuccessAt ?? '-'),
    s.lastError ? `<span class="bad">${escapeHtml(s.lastError)}</span>` : '-',
    String(s.openRejects),
  ];
}

function streamsSection(status: StatusData): string {
  if (status.streams.length === 0) return '<p>No sources are configured.</p>';
  const headers = ['source', 'stream', 'checkpoint', 'lag', 'open windows', 'incomplete windows'];
  return table(
    [...headers, 'last success', 'last error', 'open rejects'],
    status.streams.map(streamRow),
    'streams',
  );
}

function healthSection(status: StatusData): string {
  if (status.streams.length === 0) return '<p>No sources are configured.</p>';
  const items = status.streams.map((s) => {
    const h = streamHealth(s);
    const notes = h.notes.length ? `<span class="notes">${escapeHtml(h.notes.join('; '))}</span>` : '';
    const todo = PHASE_TODO[h.phase]
      ? `<br><span class="todo">${escapeHtml(PHASE_TODO[h.phase])}</span>`
      : '';
    return `<li class="health phase-${phaseSlug(h.phase)}" data-source="${escapeHtml(h.source)}" data-stream="${escapeHtml(h.stream)}" data-phase="${h.phase}"><span class="badge">${h.phase}</span> <b>${escapeHtml(h.source)}</b> ${escapeHtml(h.reason)} ${notes}${todo}</li>`;
  });
  return `<ul class="health-list">${items.join('\n')}</ul>`;
}

function queueSection(status: StatusData, queuesPath: string): string {
  const counts = Object.entries(status.queue)
    .map(([k, v]) => `${escapeHtml(k)} ${v}`)
    .join(', ');
  return `<p class="queue">${counts} &mdash; <a href="${escapeHtml(queuesPath)}">open the queue dashboard</a> (retry, remove, errors)</p>`;
}

function reconcileSection(rows: ReconcileRow[], days: number): string {
  if (rows.length === 0) return `<p class="reconcile-empty">no reconcile results yet (last ${days} days)</p>`;
  const headers = ['day', 'checked at', 'source', 'stream', 'service', 'warehouse', 'result', 'quarantined'];
  const body = rows.map((r) => [
    escapeHtml(r.day),
    escapeHtml(r.checkedAt.toISOString()),
    escapeHtml(r.source),
    escapeHtml(r.stream),
    String(r.service),
    String(r.warehouse),
    r.mismatches === 0
      ? 'match'
      : `<span class="bad">${r.mismatches} status${r.mismatches === 1 ? '' : 'es'} differ</span>`,
    String(r.quarantined),
  ]);
  return table(headers, body, 'reconcile');
}

function chartsSection(h: History, zone: string): string {
  const common = { from: h.from, to: h.to, zone };
  return [
    renderChart({
      id: 'chart-lag',
      title: 'Lag per stream',
      unit: 'minutes behind',
      kind: 'line',
      series: h.lag,
      ...common,
    }),
    renderChart({
      id: 'chart-records',
      title: 'New records per hour (first stored; re-reads not counted)',
      unit: 'new records per hour',
      kind: 'bars',
      counted: 'distinct new records',
      series: h.records,
      ...common,
    }),
    renderChart({
      id: 'chart-rejects',
      title: 'Records quarantined per hour (first seen)',
      unit: 'rejects per hour',
      kind: 'bars',
      counted: 'quarantined records',
      series: h.rejects,
      ...common,
    }),
    renderChart({
      id: 'chart-failures',
      title: 'Upstream failures per hour (incomplete windows, failed jobs)',
      unit: 'failures per hour',
      kind: 'bars',
      counted: 'failures',
      series: h.failures,
      ...common,
    }),
  ].join('\n');
}

function etaWords(ms: number): string {
  return ms < 60_000 ? 'under a minute left' : `about ${peopleDuration(ms / 1000)} left`;
}

function backfillItem(b: BackfillView, now: Date): string {
  const finished = b.done + b.failed + b.cancelled;
  const pace = paceOf(b, now);
  const rate =
    pace.perHour === null
      ? b.state === 'running'
        ? 'no progress yet'
        : ''
      : `${pace.perHour >= 10 ? Math.round(pace.perHour) : pace.perHour.toFixed(1)} windows per hour` +
        (pace.etaMs !== null && b.state === 'running' ? `; ${etaWords(pace.etaMs)}` : '');
  const failed = b.failedItems.length
    ? `<ul class="failed-items">${b.failedItems.map((f) => `<li>${escapeHtml(f.label)}: ${escapeHtml(f.detail ?? 'failed')}</li>`).join('')}</ul>`
    : '';
  const pct = b.total ? Math.floor((finished / b.total) * 100) : 0;
  const atService = (b.pace ?? [])
    .map((p) => `<span class="bf-pace">${escapeHtml(`${p.source}: ${describePace(p)}`)}</span>`)
    .join('; ');
  return `<li class="backfill backfill-${b.state}" data-backfill="${b.id}">
<b>#${b.id}</b> ${escapeHtml(b.fromDay)} → ${escapeHtml(b.toDay)} (${escapeHtml(b.streams.join(', '))}; ${escapeHtml(b.sources.join(', '))}) <span class="bf-state">${b.state}</span><br>
<progress max="${b.total}" value="${finished}" aria-label="backfill ${b.id}: ${finished} of ${b.total} windows finished">${pct}%</progress>
<span class="bf-counts">${b.done} done, ${b.failed} failed, ${b.left} left of ${b.total} windows (${pct}%)</span>; ${b.records} records${rate ? `; <span class="bf-rate">${rate}</span>` : ''}${atService ? `<br>${atService}` : ''}${failed}</li>`;
}

function backfillsSection(list: BackfillView[], now: Date): string {
  if (list.length === 0) return '<p class="backfills-none">no running or recent backfills</p>';
  return `<ul class="backfills">${list.map((b) => backfillItem(b, now)).join('\n')}</ul>`;
}

const STYLE = `body{font:14px system-ui,sans-serif;margin:1.5em;color:#1a1a1a;max-width:1200px}
table{border-collapse:collapse;margin:.5em 0}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}th{background:#f3f3f3}
ul{margin:0;padding-left:1.1em}.bad{color:#b00020}
.health-list{list-style:none;padding:0}.health{margin:.2em 0}
.badge{display:inline-block;min-width:6.5em;text-align:center;border-radius:3px;padding:0 .4em;font-weight:600;color:#fff}
.phase-healthy .badge{background:#15803d}.phase-catching_up .badge{background:#1d4ed8}.phase-never_synced .badge{background:#6b7280}
.phase-degraded .badge{background:#b45309}.phase-down .badge{background:#b00020}
.notes,.todo{color:#555}
.calendar{display:grid;grid-template-columns:repeat(7,minmax(0,1fr));gap:4px;max-width:1000px}
.dow{font-weight:600;text-align:center}
.day{border:1px solid #999;border-radius:4px;padding:3px;position:relative;font-size:12px;min-height:4.6em}
.day summary{cursor:pointer;list-style:none;display:flex;flex-direction:column}
.day summary::-webkit-details-marker{display:none}
.day .state{font-weight:700}.day .date{color:#333}
.day[open]{z-index:2}
.day-detail{position:absolute;left:0;top:100%;width:24em;background:#fff;border:1px solid #555;padding:.5em;z-index:3;box-shadow:0 2px 6px #0004}
.state-final{background:#d9f2df}.state-provisional{background:#fdf1c7}.state-incomplete{background:#fbd5c9}
.state-out-of-range{background:#fff;color:#666;border-style:dashed}.state-syncing{background:#d6e6fb}.state-restated{background:#f3d6f5;outline:2px solid #9b3fa3}.state-not-synced{background:#e4e4e4;background-image:repeating-linear-gradient(45deg,transparent 0 6px,#0000000d 6px 12px)}
.states{list-style:none;padding:0;font-size:12px}.key{display:inline-block;min-width:8em;border:1px solid #999;padding:0 .3em;margin:.1em .3em .1em 0}
.charts{display:flex;flex-wrap:wrap;gap:1em}
.chart{margin:0}.chart figcaption{font-weight:600}
.chart .grid{stroke:#e5e5e5}.chart .axis{stroke:#555}.chart text{font-size:10px;fill:#333}
.chart .series{stroke-width:1.5}.legend{list-style:none;padding:0;font-size:12px}
.swatch{display:inline-block;width:.8em;height:.8em;margin-right:.3em}
.no-data{width:560px;height:60px;border:1px dashed #999;display:flex;align-items:center;justify-content:center;color:#555}
.backfills{list-style:none;padding:0}.backfill{margin:.4em 0}progress{width:320px}`;

export function renderStatusPage(input: StatusPageInput): string {
  const zone = input.zone ?? 'UTC';
  const calendar = input.calendar
    ? `<h2>Days (${escapeHtml(zone)}), last ${input.calendar.length}</h2>\n${renderCalendar(input.calendar, zone)}`
    : '';
  const charts = input.history
    ? `<h2>Last 24 hours</h2>\n<div class="charts">${chartsSection(input.history, zone)}</div>`
    : '';
  const backfills = input.backfills
    ? `<h2>Backfills</h2>\n${backfillsSection(input.backfills, input.generatedAt)}`
    : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="30">
<title>paysync status</title><style>${STYLE}</style></head>
<body>
<h1>paysync status</h1>
<p>generated ${escapeHtml(input.generatedAt.toISOString())}; refreshes every 30 s</p>
${input.paging ?? ''}
<h2>Health</h2>
${healthSection(input.status)}
${calendar}
${charts}
${backfills}
${input.recordChanges ? recordChangesSection(input.recordChanges) : ''}
<h2>Sources and streams</h2>
${streamsSection(input.status)}
<h2>Queue</h2>
${queueSection(input.status, input.queuesPath)}
<h2>Reconcile, last ${input.reconcileDays} days</h2>
${reconcileSection(input.reconcile, input.reconcileDays)}
</body></html>
`;
}
