/**
 * The calendar of days on the status page, pure HTML: one cell per local day, coloured AND labelled in
 * words by its state, with its reconcile result and pack version; a <details> per cell opens the day's
 * counts, sums, the records behind its reconcile and the pack's files, without any script.
 */
import { DateTime } from 'luxon';
import { escapeHtml } from './html.js';
import { LISTED_RECORDS, type CalendarDay, type ListedRecord } from './status-calendar.js';
import { DAY_STATE_LABEL, reconcileLabel, type DayState } from './status-day-state.js';

/** A mark beside the word, for people who cannot tell the colours apart (the word is the signal). */
const GLYPH: Record<DayState, string> = {
  final: '✔',
  provisional: '◐',
  incomplete: '⚠',
  syncing: '↻',
  'not-synced': '✕',
  'out-of-range': '–',
  restated: '↺',
};

export const STATE_MEANING: Record<DayState, string> = {
  final: 'the pack is final: synced, settled, reconciled with nothing unexplained',
  provisional: 'synced, but not final yet (no pack, records still moving, or reconcile not clean)',
  incomplete: 'the pack was published before sync covered the day',
  syncing: 'not covered yet, and being synced (today, or a running backfill)',
  'not-synced': 'the day is over and sync does not cover it: it needs a backfill',
  'out-of-range': 'before SYNC_START: live sync does not read it, nothing is missing',
  restated: 'finance signed off a version, and a later one changed its records: it needs a new sign-off',
};

const e = escapeHtml;

function recordLine(r: ListedRecord): string {
  const what =
    r.kind === 'quarantined'
      ? `quarantined${r.reason ? `: ${r.reason}` : ''}`
      : `${r.kind.replace(/_/g, ' ')}: service ${r.serviceStatus ?? '-'} ${r.serviceAmount ?? ''} / warehouse ${r.warehouseStatus ?? '-'} ${r.warehouseAmount ?? ''}${r.reason ? ` (${r.reason})` : ''}`;
  return `<li>${e(r.stream)} ${e(r.id ?? '(no id)')}: ${e(what)}</li>`;
}

function recordsBlock(day: CalendarDay, quarantined: boolean): string {
  const listed = day.records.filter((r) => (r.kind === 'quarantined') === quarantined);
  const total = Object.entries(day.recordCounts)
    .filter(([kind]) => (kind === 'quarantined') === quarantined)
    .reduce((n, [, c]) => n + c, 0);
  if (total === 0) return '';
  const title = quarantined ? 'quarantined records' : 'differing records';
  const more =
    total > listed.length
      ? `<li>and ${total - listed.length} more (first ${LISTED_RECORDS} listed)</li>`
      : '';
  return `<h4>${total} ${title}</h4><ul class="${quarantined ? 'quarantined' : 'differing'}">${listed.map(recordLine).join('')}${more}</ul>`;
}

function detailBlock(day: CalendarDay): string {
  const parts = [`<p class="reason">${e(day.reason)}</p>`];
  if (day.totals.length > 0) {
    const rows = day.totals.map(
      (t) => `<tr><td>${e(t.stream)}</td><td>${t.records}</td><td>${e(t.amount)}</td></tr>`,
    );
    parts.push(
      `<table class="totals"><thead><tr><th>stream</th><th>records now</th><th>amount now</th></tr></thead><tbody>${rows.join('')}</tbody></table>`,
    );
  } else parts.push('<p>no records in the warehouse for this day</p>');
  if (day.openRecords > 0) parts.push(`<p>${day.openRecords} record(s) not yet in a final state</p>`);
  if (day.reconcile)
    parts.push(
      `<p>reconciled ${e(day.reconcile.checkedAt.toISOString())}: ${e(reconcileLabel(day.reconcile))}</p>`,
      recordsBlock(day, true),
      recordsBlock(day, false),
    );
  if (day.pack) {
    const p = day.pack;
    const totals = p.totals.map((t) => `${e(t.stream)} ${t.records} records, ${e(t.amount)}`).join('; ');
    const files = p.files.map(
      (f) =>
        `<li><code>${e(f.path)}</code>${f.rows === null ? '' : `, ${f.rows} rows`}${f.sha256 ? `, sha256 ${e(f.sha256.slice(0, 12))}…` : ''}</li>`,
    );
    parts.push(
      `<h4>pack v${p.version} (${e(p.state)}), written ${e(p.generatedAt.toISOString())}</h4>`,
      `<p>${totals}</p><ul class="files">${files.join('')}</ul>`,
    );
  } else parts.push('<p>no pack published</p>');
  return `<div class="day-detail">${parts.join('')}</div>`;
}

function cell(day: CalendarDay, zone: string): string {
  const date = DateTime.fromISO(day.day, { zone }).toFormat('ccc d LLL');
  const pack = day.pack ? `pack v${day.pack.version}` : 'no pack';
  const rec = reconcileLabel(day.reconcile);
  const label = DAY_STATE_LABEL[day.state];
  const title = `${day.day}: ${label}; ${rec}; ${pack}. ${day.reason}`;
  return `<details class="day state-${day.state}" data-day="${day.day}" data-state="${day.state}" title="${e(title)}">
<summary><span class="date">${e(date)}</span><span class="state">${GLYPH[day.state]} ${label}</span><span class="rec">${e(rec)}</span><span class="pack">${pack}</span></summary>
${detailBlock(day)}</details>`;
}

export function renderCalendar(days: readonly CalendarDay[], zone: string): string {
  if (days.length === 0) return '<p>no days</p>';
  const first = DateTime.fromISO((days[0] as CalendarDay).day, { zone });
  const blanks = Array.from({ length: first.weekday - 1 }, () => '<div class="blank"></div>');
  const heads = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'].map((d) => `<div class="dow">${d}</div>`);
  const legend = (Object.keys(STATE_MEANING) as DayState[])
    .map(
      (s) =>
        `<li><span class="key state-${s}">${GLYPH[s]} ${DAY_STATE_LABEL[s]}</span> ${e(STATE_MEANING[s])}</li>`,
    )
    .join('');
  return `<div class="calendar">${heads.join('')}${blanks.join('')}${days.map((d) => cell(d, zone)).join('\n')}</div>
<ul class="states">${legend}</ul>`;
}
