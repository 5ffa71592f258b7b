/**
 * The service's records changed shape: the field sightings nobody has acknowledged yet
 * (reporting.field_sightings), as `paysync status` and `paysync probe` print them, as the status page
 * shows them, and as JSON. An announcement, not a failure: it never changes status's exit code, and it
 * stays until someone runs `paysync probe --ack FIELD`. Field names and values come from the service: text
 * output goes through the caller's one-line guard, HTML through escapeHtml.
 */
import type pg from 'pg';
import { listFieldSightings, type FieldSighting, type SightingList } from '../warehouse/field-sightings.js';
import { escapeHtml } from './html.js';

export type { FieldSighting, SightingList } from '../warehouse/field-sightings.js';

/** Most sightings listed at once (the rest are counted). */
export const SIGHTINGS_SHOWN = 50;

/** The sightings still to acknowledge, oldest first (at most SIGHTINGS_SHOWN), and how many there are. */
export function recordChanges(pool: Pick<pg.Pool, 'query'>): Promise<SightingList> {
  return listFieldSightings(pool, { unacknowledgedOnly: true, limit: SIGHTINGS_SHOWN });
}

const more = (list: SightingList): number => list.total - list.sightings.length;

export const ACK_HINT = 'paysync probe --ack FIELD [--stream STREAM] [--by NAME]';

/** One sighting in words (its field name and example as the service sent them: guard before printing). */
export function describeSighting(s: FieldSighting): string {
  const seen = `first seen ${s.firstSeenAt.toISOString()} (source ${s.firstSource})`;
  if (s.change === 'added') {
    const example = s.example === null ? '' : `, e.g. ${s.example}`;
    return `${s.stream}: new field ${s.field}, ${seen}, on ${s.records} stored record(s)${example}`;
  }
  const what = s.change === 'missing' ? 'no longer sent' : 'sent with another type';
  const example = s.example === null ? '' : `, e.g. ${s.example}`;
  return (
    `${s.stream}: field ${s.field} ${what} (${s.detail ?? s.change}), ${seen}; ${s.records} record(s) ` +
    `quarantined${example}`
  );
}

/** The text section of `paysync status` and `paysync probe`; empty when there is nothing to announce. */
export function renderRecordChanges(list: SightingList, guard: (text: string) => string): string {
  if (list.total === 0) return '';
  const lines = list.sightings.map((s) => `  ${guard(describeSighting(s))}`);
  if (more(list) > 0) lines.push(`  … and ${more(list)} more`);
  return `\nthe service's records changed shape (not a failure; acknowledge with ${ACK_HINT}):\n${lines.join('\n')}\n`;
}

/** `status --json`'s form: how many, and the first ones. */
export function recordChangesJson(list: SightingList): Record<string, unknown> {
  return { total: list.total, sightings: list.sightings.map(sightingJson) };
}

/** A sighting as JSON (`status --json`, the status page's JSON): times as ISO text. */
export function sightingJson(s: FieldSighting): Record<string, unknown> {
  return {
    ...s,
    firstSeenAt: s.firstSeenAt.toISOString(),
    lastSeenAt: s.lastSeenAt.toISOString(),
    acknowledgedAt: s.acknowledgedAt?.toISOString() ?? null,
  };
}

/** The status page's section; empty when there is nothing to announce. */
export function recordChangesSection(list: SightingList): string {
  if (list.total === 0) return '';
  const items = list.sightings.map((s) => `<li>${escapeHtml(describeSighting(s))}</li>`);
  if (more(list) > 0) items.push(`<li>… and ${more(list)} more</li>`);
  return (
    `<h2>The service's records changed shape</h2>\n` +
    `<p>Not a failure: new fields are kept in <code>unknown_fields</code>; records missing a field, or ` +
    `sending it with another type, are quarantined. Acknowledge with <code>${escapeHtml(ACK_HINT)}</code>.</p>\n` +
    `<ul class="record-changes">\n${items.join('\n')}\n</ul>`
  );
}
