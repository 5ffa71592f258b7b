/**
 * Helpers of the export and reconcile tests, written independently of src/reconcile so that a test never
 * checks the pack with the code that wrote it: an RFC 4180 reader and exact decimal sums on BigInt.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export { syncAll } from './sync-harness.js';

/**
 * Parses RFC 4180 text (quoted fields, doubled quotes) into rows of cells. Records end with CRLF, as the
 * pack writes them; with `lineEnds: 'any'` a bare LF ends one too (CSV as LibreOffice writes it).
 */
export function parseCsv(text: string, options: { lineEnds?: 'crlf' | 'any' } = {}): string[][] {
  const anyEnd = options.lineEnds === 'any';
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if ((c === '\r' && text[i + 1] === '\n') || (anyEnd && c === '\n')) {
      if (c === '\r') i++;
      rows.push([...row, cell]);
      row = [];
      cell = '';
    } else cell += c;
  }
  if (cell !== '' || row.length > 0) rows.push([...row, cell]);
  return rows;
}

/** CSV text → objects keyed by the header. */
export function csvObjects(
  text: string,
): Array<
  Record<string, string> &
    Record<
      | 'id'
      | 'amount'
      | 'status'
      | 'extra_data'
      | 'transaction_type'
      | 'service_mobile_code'
      | 'level'
      | 'stream'
      | 'records'
      | 'createdAt'
      | 'updatedAt'
      | 'description'
      | 'phone'
      | 'name',
      string
    >
> {
  const [header, ...rows] = parseCsv(text);
  return rows.map((r) => Object.fromEntries((header ?? []).map((h, i) => [h, r[i] ?? ''])) as never);
}

/** Exact sum of decimal strings, returned as "units/scale" normalised (trailing zeros removed). */
export function exactSum(values: readonly string[]): string {
  const scale = Math.max(0, ...values.map((v) => v.split('.')[1]?.length ?? 0));
  const total = values.reduce((acc, v) => {
    const [whole, fraction = ''] = v.split('.');
    return acc + BigInt(`${whole}${fraction.padEnd(scale, '0')}`);
  }, 0n);
  return normalise(total, scale);
}

export function normaliseDecimal(v: string): string {
  const [whole, fraction = ''] = v.split('.');
  return normalise(BigInt(`${whole}${fraction}`), fraction.length);
}

function normalise(units: bigint, scale: number): string {
  const digits = units.toString().padStart(scale + 1, '0');
  const fraction = digits.slice(digits.length - scale).replace(/0+$/, '');
  return `${digits.slice(0, digits.length - scale)}${fraction ? `.${fraction}` : ''}`;
}

export const tempExportDir = () => mkdtemp(join(tmpdir(), 'paysync-export-'));
