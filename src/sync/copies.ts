/**
 * Copies of one record that contradict each other on different pages of a list (the interface promises no
 * unique ids): the rule already used within a page (warehouse/page-prep.ts), applied across the pages of
 * a read, for payments and transfers alike. The newer `updatedAt` wins; copies that differ at the newest
 * `updatedAt` are a tie, and which is true cannot be known, so none is written. Either way every distinct
 * version goes to `sync_rejects` (and the day's rejects.csv) with the reason, and stays there while the
 * service keeps listing them.
 *
 * A read cannot keep every record it loads to compare with a later copy, so the copies are gathered by
 * id: a read holds back the later copies of an id it already saw (HeldCopies), the next read holds every
 * copy of those ids, and the ids the rejects hold as contradicted are held from the first read on. Pure.
 */
import { toExactJson } from '../upstream/exact-json.js';
import type { RejectedRecord } from '../upstream/schemas.js';

/** How a contradiction's reject reason starts (the warehouse finds the ids still contradicted by it). */
export const CONTRADICTING_REASON = 'contradicting copies';

/** What the rule needs of a record: its id and when the service last changed it. */
export interface Versioned {
  id: string;
  updatedAt: string;
}

export interface CopiesVerdict<T extends Versioned> {
  /** The version to write (null: a tie, none). */
  keep: T | null;
  /** Every distinct version, with the reason, when they contradict each other; else none. */
  rejects: RejectedRecord[];
}

function differingFields(versions: readonly Versioned[]): string[] {
  const first = versions[0] as unknown as Record<string, unknown>;
  const names = Object.keys(first).filter((k) =>
    versions.some((v) => toExactJson((v as unknown as Record<string, unknown>)[k]) !== toExactJson(first[k])),
  );
  return names.length > 0 ? names : ['fields'];
}

/** The verdict on every copy of one id a read listed (at least one). */
export function judgeCopies<T extends Versioned>(copies: readonly T[]): CopiesVerdict<T> {
  const versions = [...new Map(copies.map((c) => [toExactJson(c), c])).values()];
  if (versions.length === 1) return { keep: versions[0] as T, rejects: [] };
  const newest = Math.max(...versions.map((v) => Date.parse(v.updatedAt)));
  const top = versions.filter((v) => Date.parse(v.updatedAt) === newest);
  const fields = differingFields(versions).join(', ');
  const id = (versions[0] as T).id;
  const listed = `${CONTRADICTING_REASON}: id listed ${copies.length} times in one read in ${versions.length} versions (${fields} differ)`;
  const reason =
    top.length === 1
      ? `${listed}; the newer updatedAt (${(top[0] as T).updatedAt}) is kept`
      : `${listed} with the same newest updatedAt; which copy is true cannot be known, none is kept`;
  return {
    keep: top.length === 1 ? (top[0] as T) : null,
    rejects: versions.map((raw) => ({ raw, reason, id })),
  };
}

/** What a read's held copies come to once judged (HeldCopies.judge). */
export interface HeldVerdict<T extends Versioned> {
  /** The versions to write. */
  records: T[];
  /** Every version of the ids whose copies contradict each other. */
  rejects: RejectedRecord[];
  /** Valid listings of those ids not written (counted as rejects, not records). */
  unwritten: number;
  /** Whether any held id was listed in contradicting copies (the CONTRADICTING_COPIES note). */
  contradicted: boolean;
}

/**
 * The copies one read holds back instead of writing them at once: every copy of a watched id (an earlier
 * read listed it more than once, or the rejects hold it as contradicted), and the later copies of an id
 * this read already listed on an earlier page (its first copy is written; the id is `unjudged` and
 * waits for the next read, which watches it).
 */
export class HeldCopies<T extends Versioned> {
  private readonly held = new Map<string, T[]>();
  /** Ids whose later copies were held back unjudged: watch them in the next read. */
  readonly unjudged = new Set<string>();

  constructor(private readonly watch: ReadonlySet<string> | undefined) {}

  /** Whether the record is held back (not to be written now); `repeated`: this read listed its id before. */
  hold(record: T, repeated: boolean): boolean {
    const watched = this.watch?.has(record.id) === true;
    if (!watched && !repeated) return false;
    const copies = this.held.get(record.id);
    if (copies) copies.push(record);
    else this.held.set(record.id, [record]);
    if (!watched) this.unjudged.add(record.id);
    return true;
  }

  /** Watched ids this read listed (their copies are held, none written yet). */
  watchedSeen(): string[] {
    return [...this.held.keys()].filter((id) => this.watch?.has(id));
  }

  /** The copies held back of these ids. */
  copiesOf(ids: Iterable<string>): T[] {
    const out: T[] = [];
    for (const id of ids) for (const copy of this.held.get(id) ?? []) out.push(copy);
    return out;
  }

  /** The watched ids' copies (all of them, the read being whole), judged by judgeCopies. */
  judge(): HeldVerdict<T> {
    const out: HeldVerdict<T> = { records: [], rejects: [], unwritten: 0, contradicted: false };
    for (const [id, copies] of this.held) {
      if (!this.watch?.has(id)) continue;
      const verdict = judgeCopies(copies);
      if (verdict.keep) out.records.push(verdict.keep);
      for (const reject of verdict.rejects) out.rejects.push(reject);
      if (verdict.rejects.length === 0) continue; // the same record listed twice: a copy, not a reject
      out.unwritten += copies.length - (verdict.keep ? 1 : 0);
      out.contradicted = true;
    }
    return out;
  }
}
