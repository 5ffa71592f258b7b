/**
 * verify's record-level report: the records file as published against the same file derived from the
 * warehouse now, one line per record that differs, named by id with the pack's values and the
 * warehouse's (every record: a difference is never only a count).
 */
import { diffRecordFiles, type RecordValues } from './pack-csv-diff.js';

const brief = (r: RecordValues) => `status ${r.values.status ?? '?'}, amount ${r.values.amount ?? '?'}`;

export async function recordDifferences(
  stream: 'payments' | 'transfers',
  packPath: string,
  derivedPath: string,
): Promise<string[]> {
  const diff = await diffRecordFiles(packPath, derivedPath);
  return [
    ...diff.changed.map((c) => {
      const columns = Object.entries(c.columns).map(([name, v]) => `${name} ${v.old} → ${v.new}`);
      return `  ${stream} ${c.id}: ${columns.join(', ')} (pack → warehouse)`;
    }),
    ...diff.removed.map(
      (r) => `  ${stream} ${r.id}: in the pack (${brief(r)}), no longer in the warehouse's day`,
    ),
    ...diff.added.map((r) => `  ${stream} ${r.id}: in the warehouse's day (${brief(r)}), not in the pack`),
  ];
}
