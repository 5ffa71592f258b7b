/**
 * Two records files of the pack (payments.csv or transfers.csv, as published and as derived again)
 * compared record by record, keyed by id: which records were added, removed, or hold other values, and
 * which values. Used by verify (the pack on disk against the warehouse now) and by the restatement when
 * the previous version's records are known only from its files (a pack restated by another warehouse).
 * Files are read with csv-parse (the csv-stringify project's parser: RFC 4180, quoted line breaks) as
 * streams; the first file is held as one JSON string per record, the second is compared as it streams.
 * Both files are the pack's own form (neutralised cells), so equal records compare equal byte for byte.
 */
import { createReadStream } from 'node:fs';
import { parse } from 'csv-parse';

export interface RecordValues {
  id: string;
  /** The record's cells by header name. */
  values: Record<string, string>;
}

export interface RecordChange {
  id: string;
  /** Only the columns that differ. */
  columns: Record<string, { old: string; new: string }>;
  old: Record<string, string>;
  new: Record<string, string>;
}

export interface RecordsDiff {
  added: RecordValues[];
  removed: RecordValues[];
  changed: RecordChange[];
}

async function* rows(path: string): AsyncGenerator<string[]> {
  const parser = createReadStream(path).pipe(parse({ relax_column_count: true }));
  for await (const row of parser as AsyncIterable<string[]>) yield row;
}

const valuesOf = (header: readonly string[], cells: readonly string[]) =>
  Object.fromEntries(header.map((h, i) => [h, cells[i] ?? '']));

/** Old file (the pack) against new file (derived now). The id is the column named `id`. */
export async function diffRecordFiles(oldPath: string, newPath: string): Promise<RecordsDiff> {
  const before = new Map<string, string>();
  let oldHeader: string[] | null = null;
  for await (const cells of rows(oldPath)) {
    if (!oldHeader) oldHeader = cells;
    else before.set(cells[oldHeader.indexOf('id')] ?? '', JSON.stringify(cells));
  }
  const out: RecordsDiff = { added: [], removed: [], changed: [] };
  let newHeader: string[] | null = null;
  for await (const cells of rows(newPath)) {
    if (!newHeader) {
      newHeader = cells;
      continue;
    }
    const id = cells[newHeader.indexOf('id')] ?? '';
    const old = before.get(id);
    before.delete(id);
    if (old === undefined) out.added.push({ id, values: valuesOf(newHeader, cells) });
    else if (old !== JSON.stringify(cells) || oldHeader?.join() !== newHeader.join())
      pushChange(out, id, valuesOf(oldHeader ?? [], JSON.parse(old) as string[]), valuesOf(newHeader, cells));
  }
  for (const [id, old] of before)
    out.removed.push({ id, values: valuesOf(oldHeader ?? [], JSON.parse(old) as string[]) });
  return out;
}

function pushChange(
  out: RecordsDiff,
  id: string,
  old: Record<string, string>,
  now: Record<string, string>,
): void {
  const columns: RecordChange['columns'] = {};
  for (const key of new Set([...Object.keys(old), ...Object.keys(now)])) {
    if (old[key] !== now[key]) columns[key] = { old: old[key] ?? '', new: now[key] ?? '' };
  }
  if (Object.keys(columns).length > 0) out.changed.push({ id, columns, old, new: now });
}
