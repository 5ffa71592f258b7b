/**
 * The status page of many sources, bounded: beyond SOURCES_PER_PAGE sources the per-source parts (health,
 * streams table, charts, reconcile rows) show one page of sources at a time (`/status?page=N`, sources in
 * name order), above a summary of all of them (how many streams in each health phase, and the streams
 * that need attention, wherever they are, with a link to their page). The parts about all sources at once
 * (the calendar's day reasons, a backfill's list of sources) are cut to a few names and a count. So the
 * page stays well under 1 MB whatever the number of sources. A layer over the renderer
 * (status-page.ts): it chooses what is rendered; the health verdicts are status-health.ts's.
 */
import { escapeHtml } from './html.js';
import type { ReconcileRow } from './reconcile-results.js';
import type { BackfillView } from './status-backfills.js';
import type { CalendarDay } from './status-calendar.js';
import type { StatusData } from './status-data.js';
import { phaseSlug, streamHealth, type Phase } from './status-health.js';

/** A few dozen sources fit one page; more are paged. */
export const SOURCES_PER_PAGE = 25;
/** Streams needing attention listed in the summary (the rest counted). */
export const ATTENTION_LISTED = 50;
/** The longest day reason or list of names kept whole, in characters. */
export const MAX_REASON = 600;
const NAMES_LISTED = 10;

export interface Paging {
  page: number;
  pages: number;
  sources: number;
  /** Streams of all sources per health phase. */
  phases: Partial<Record<Phase, number>>;
  attention: Array<{ source: string; stream: string; phase: Phase; reason: string; page: number }>;
  /** Streams needing attention beyond those listed. */
  moreAttention: number;
}

export interface PagedStatus {
  /** The page's sources only (all of them when they fit one page). */
  status: StatusData;
  /** Null when every source fits one page. */
  paging: Paging | null;
  sources: ReadonlySet<string>;
}

/** The page number a query asks for (1 when absent), or null when it is not a page number. */
export function pageParameter(value: unknown): number | null {
  if (value === undefined) return 1;
  if (typeof value !== 'string' || !/^[1-9]\d{0,6}$/.test(value)) return null;
  return Number(value);
}

/** Page `page` (clamped to the last) of `status`, with the summary of all sources when there are several pages. */
export function pageStatus(status: StatusData, page: number, perPage = SOURCES_PER_PAGE): PagedStatus {
  const names = [...new Set(status.streams.map((s) => s.source))].sort();
  const pages = Math.max(1, Math.ceil(names.length / perPage));
  const current = Math.min(Math.max(1, page), pages);
  const onPage = new Set(names.slice((current - 1) * perPage, current * perPage));
  const streams = status.streams.filter((s) => onPage.has(s.source));
  if (pages === 1) return { status, paging: null, sources: onPage };
  const pageOf = new Map(names.map((name, i) => [name, Math.floor(i / perPage) + 1]));
  const phases: Paging['phases'] = {};
  const attention: Paging['attention'] = [];
  for (const s of status.streams) {
    const h = streamHealth(s);
    phases[h.phase] = (phases[h.phase] ?? 0) + 1;
    if (h.phase !== 'healthy') {
      const { source, stream, phase, reason } = h;
      attention.push({ source, stream, phase, reason, page: pageOf.get(source) ?? 1 });
    }
  }
  return {
    status: { ...status, streams },
    paging: {
      page: current,
      pages,
      sources: names.length,
      phases,
      attention: attention.slice(0, ATTENTION_LISTED),
      moreAttention: Math.max(0, attention.length - ATTENTION_LISTED),
    },
    sources: onPage,
  };
}

/** `text` cut to about MAX_REASON characters at its `; ` separators: the head, a count, and the last two parts. */
export function boundReason(text: string, max = MAX_REASON): string {
  if (text.length <= max) return text;
  const parts = text.split('; ');
  const tail = parts.slice(-2);
  const budget = max - tail.join('; ').length - 40;
  const head: string[] = [];
  let used = 0;
  for (const part of parts.slice(0, -2)) {
    if (used + part.length > budget && head.length > 0) break;
    head.push(part.length > max ? `${part.slice(0, max)}…` : part);
    used += part.length + 2;
  }
  const omitted = parts.length - tail.length - head.length;
  return [...head, `… ${omitted} more not shown`, ...tail].join('; ');
}

function boundNames(names: readonly string[]): string[] {
  return names.length <= NAMES_LISTED
    ? [...names]
    : [...names.slice(0, NAMES_LISTED), `… and ${names.length - NAMES_LISTED} more`];
}

/** The calendar with its day reasons bounded. */
export function boundCalendar(days: readonly CalendarDay[]): CalendarDay[] {
  return days.map((d) => ({ ...d, reason: boundReason(d.reason) }));
}

/** The backfills with their lists of sources bounded. */
export function boundBackfills(list: readonly BackfillView[]): BackfillView[] {
  return list.map((b) => ({ ...b, sources: boundNames(b.sources) }));
}

/** The reconcile rows of the page's sources. */
export function reconcileOfPage(rows: readonly ReconcileRow[], paged: PagedStatus): ReconcileRow[] {
  return rows.filter((r) => paged.sources.has(r.source));
}

/** The summary of all sources and the links to the other pages (empty when there is one page). */
export function renderPaging(paging: Paging | null, path: string): string {
  if (!paging) return '';
  const link = (n: number) => `<a href="${escapeHtml(path)}?page=${n}">${n}</a>`;
  const phases = Object.entries(paging.phases)
    .map(([phase, n]) => `${n} ${escapeHtml(phase)}`)
    .join(', ');
  const items = paging.attention.map(
    (a) =>
      `<li><b>${escapeHtml(a.source)}</b> ${escapeHtml(a.stream)} <span class="phase-${phaseSlug(a.phase)}">${a.phase}</span>: ${escapeHtml(a.reason)} (page ${link(a.page)})</li>`,
  );
  if (paging.moreAttention > 0) items.push(`<li>… and ${paging.moreAttention} more</li>`);
  const pages = Array.from({ length: paging.pages }, (_, i) =>
    i + 1 === paging.page ? `<b>${i + 1}</b>` : link(i + 1),
  );
  return `<section class="paging"><h2>All ${paging.sources} sources</h2>
<p class="phases">streams: ${phases}</p>
${items.length ? `<ul class="attention">${items.join('\n')}</ul>` : '<p>every stream is healthy</p>'}
<p class="pages">page ${paging.page} of ${paging.pages} (${SOURCES_PER_PAGE} sources a page, by name): ${pages.join(' ')}</p></section>`;
}
