/**
 * The second line of evidence for records listed more than once (pure). Within one list, a record listed
 * twice with `total` counting both cannot be told from a copy standing in place of a record never listed:
 * both show `total` listings, one id twice. The service's counts by status can: reconcile takes them
 * (service-counts.ts `countByTotals`), counts copies as sync's verdict does (a listing of an id twice is
 * one record plus one copy, read-verdict.ts `confirmedCopies`) and flags each status whose count, less
 * its copies, is not what the warehouse holds plus what is quarantined.
 *
 * Copies and quarantine are kept apart: a copy is a second listing of an id (or of the very same text,
 * for a record without a usable id), counted only when sync's own reads confirmed copies there (a
 * complete window whose row holds `duplicates`, DUPLICATES_LISTED); a quarantined record is one paysync
 * holds in sync_rejects (MALFORMED and the like), which record-diff.ts counts by id, never as a copy.
 */
import type { DayComparison, RecordDifference } from './record-diff.js';
import type { ReconcileRow, Tally } from './reconcile-row.js';
import type { ListedTwice } from './service-counts.js';

export interface CountedCopies {
  /** Per status, the listings beyond the first of records sync confirmed listed more than once. */
  byStatus: Map<string, number>;
  /** Per status, the ids of those records (for the service's owners). */
  idsByStatus: Map<string, string[]>;
  /** Statuses a record was listed in while another listing of it showed another (contradicting copies). */
  contradicted: Set<string>;
  /** Per status, listings beyond the first that no complete window recorded as copies: not counted. */
  unrecorded: Map<string, number>;
}

/**
 * The counts by status that two readings (before and after the list was read) agree on; a status whose
 * count moved in between is left out (null: not checked).
 */
export function steadyCounts(
  before: ReadonlyMap<string, Tally>,
  after: ReadonlyMap<string, Tally>,
): Map<string, Tally | null> {
  const out = new Map<string, Tally | null>();
  for (const status of new Set([...before.keys(), ...after.keys()])) {
    const [a, b] = [before.get(status)?.count ?? 0, after.get(status)?.count ?? 0];
    out.set(status, a === b ? { count: a, amount: null } : null);
  }
  return out;
}

/**
 * The copies of the day's list as sync counts them. `recorded` says whether a complete window with
 * copies on its row (`duplicates` > 0) read the record's time; a record without a usable id listed again
 * with the same text is one record (one reject) whatever the windows say.
 */
export function countCopies(
  twice: readonly ListedTwice[],
  recorded: (createdAt: number | null) => boolean,
): CountedCopies {
  const out: CountedCopies = {
    byStatus: new Map(),
    idsByStatus: new Map(),
    contradicted: new Set(),
    unrecorded: new Map(),
  };
  for (const t of twice) {
    const copies = t.statuses.slice(1);
    if (new Set(t.statuses).size > 1) for (const s of t.statuses) out.contradicted.add(s);
    if (t.id !== null && !recorded(t.createdAt)) {
      for (const s of copies) out.unrecorded.set(s, (out.unrecorded.get(s) ?? 0) + 1);
      continue;
    }
    for (const s of copies) {
      out.byStatus.set(s, (out.byStatus.get(s) ?? 0) + 1);
      if (t.id !== null) out.idsByStatus.set(s, [...(out.idsByStatus.get(s) ?? []), t.id]);
    }
  }
  return out;
}

/** How many of a status's copied ids a reason names (the rest are counted). */
const NAMED_IDS = 5;

function gapDifference(
  row: ReconcileRow,
  count: number,
  copies: CountedCopies,
  gap: number,
): Omit<RecordDifference, 'source' | 'stream'> {
  const ids = [...new Set(copies.idsByStatus.get(row.status) ?? [])];
  const named =
    ids.length === 0
      ? ''
      : ` (listed twice: ${ids.slice(0, NAMED_IDS).join(', ')}${ids.length > NAMED_IDS ? ` and ${ids.length - NAMED_IDS} more` : ''})`;
  const unrecorded = copies.unrecorded.get(row.status) ?? 0;
  const counted =
    `the service counts ${count} ${row.status} record(s), ${copies.byStatus.get(row.status) ?? 0} of them ` +
    `copies of records it lists twice${named} (confirmed by sync, DUPLICATES_LISTED), ${row.quarantined} quarantined` +
    (unrecorded > 0
      ? ` (${unrecorded} more listing(s) of records listed twice that no complete window recorded are not counted as copies: read the day again)`
      : '');
  return gap > 0
    ? {
        kind: 'missing_in_warehouse',
        id: null,
        serviceStatus: row.status,
        warehouseStatus: null,
        serviceAmount: null,
        warehouseAmount: null,
        reason: `${counted}: ${gap} more than the warehouse holds, none of them listed; a copy may stand in place of a record never listed`,
      }
    : {
        kind: 'missing_at_source',
        id: null,
        serviceStatus: null,
        warehouseStatus: row.status,
        serviceAmount: null,
        warehouseAmount: null,
        reason: `${counted}: ${-gap} fewer than the warehouse holds; a copy it lists may stand in place of a record never listed`,
      };
}

/**
 * The record-by-record comparison with the count check added: a status nothing else flags whose service
 * count, less its copies, differs from warehouse + quarantined gets that gap as `unexplained` (its
 * `service` becomes the counted figure) and a difference without an id saying why. Statuses with
 * contradicting copies are left to their rejects (which copy the service counts where cannot be known),
 * and statuses whose count is null (it moved while the list was read, steadyCounts) are not checked.
 */
export function flagCountedCopies(
  compared: DayComparison,
  counts: ReadonlyMap<string, Tally | null>,
  copies: CountedCopies,
): DayComparison {
  const differences = [...compared.differences];
  const rows = compared.rows.map((row) => {
    if (row.unexplained !== 0 || copies.contradicted.has(row.status)) return row;
    const tally = counts.get(row.status);
    if (tally === null) return row;
    const count = tally?.count ?? 0;
    const copied = copies.byStatus.get(row.status) ?? 0;
    const gap = count - copied - row.warehouse - row.quarantined;
    if (gap === 0) return row;
    const d = gapDifference(row, count, copies, gap);
    differences.push({ source: row.source, stream: row.stream, ...d });
    const service = count - copied;
    return { ...row, service, difference: service - row.warehouse, unexplained: gap };
  });
  return { rows, differences };
}
