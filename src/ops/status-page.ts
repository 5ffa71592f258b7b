/**
 * paysync's own status page (HTML, no script): per source and stream the checkpoint, lag, open and
 * incomplete windows, last success and error, rejects; the queue counts with a link to the queue
 * dashboard; and the last days' reconcile results. A pure renderer: data in, HTML out.
 */
import { humanDuration } from '../config/duration.js';
import type { ReconcileRow } from './reconcile-results.js';
import type { StatusData, StreamStatus } from './status-data.js';

export interface StatusPageInput {
  status: StatusData;
  reconcile: ReconcileRow[];
  generatedAt: Date;
  queuesPath: string;
  reconcileDays: number;
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
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

const STYLE = `body{font:14px system-ui,sans-serif;margin:1.5em}table{border-collapse:collapse;margin:.5em 0}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}th{background:#f3f3f3}
ul{margin:0;padding-left:1.1em}.bad{color:#b00020}`;

export function renderStatusPage(input: StatusPageInput): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta http-equiv="refresh" content="30">
<title>paysync status</title><style>${STYLE}</style></head>
<body>
<h1>paysync status</h1>
<p>generated ${escapeHtml(input.generatedAt.toISOString())}; refreshes every 30 s</p>
<h2>Sources and streams</h2>
${streamsSection(input.status)}
<h2>Queue</h2>
${queueSection(input.status, input.queuesPath)}
<h2>Reconcile, last ${input.reconcileDays} days</h2>
${reconcileSection(input.reconcile, input.reconcileDays)}
</body></html>
`;
}
