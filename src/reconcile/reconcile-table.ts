/**
 * Reconcile arithmetic (pure): the service's counts against the warehouse's, per status, and the table
 * `paysync reconcile` prints. `difference` is service − warehouse: positive means the warehouse lacks
 * records, negative that it holds records the service no longer lists for that status (a status moved
 * since the last sync, or a record the service dropped).
 */
import { canonicalDecimal } from './decimal.js';

export interface Tally {
  count: number;
  /** Exact sum of amounts, or null when that side gives none (a wrapper total carries no amounts). */
  amount: string | null;
}

export interface ReconcileRow {
  source: string;
  stream: 'payments' | 'transfers';
  status: string;
  service: number;
  warehouse: number;
  difference: number;
  serviceAmount: string | null;
  warehouseAmount: string | null;
  /** How the service's number was obtained: `wrapper-total`, `paged`, `paged-confirm`. */
  method: string;
}

export function compareTallies(
  base: Pick<ReconcileRow, 'source' | 'stream' | 'method'>,
  service: ReadonlyMap<string, Tally>,
  warehouse: ReadonlyMap<string, Tally>,
  alwaysShow: readonly string[] = [],
): ReconcileRow[] {
  const statuses = [...new Set([...alwaysShow, ...service.keys(), ...warehouse.keys()])].sort();
  return statuses.map((status) => {
    const s = service.get(status) ?? { count: 0, amount: base.method === 'wrapper-total' ? null : '0' };
    const w = warehouse.get(status) ?? { count: 0, amount: '0' };
    return {
      ...base,
      status,
      service: s.count,
      warehouse: w.count,
      difference: s.count - w.count,
      serviceAmount: s.amount,
      warehouseAmount: w.amount,
    };
  });
}

/** A row disagrees on its count, or on its exact amount where both sides have one. */
export function isMismatch(row: ReconcileRow): boolean {
  if (row.difference !== 0) return true;
  if (row.serviceAmount === null || row.warehouseAmount === null) return false;
  return canonicalDecimal(row.serviceAmount) !== canonicalDecimal(row.warehouseAmount);
}

export function formatTable(day: string, rows: readonly ReconcileRow[]): string {
  const header = [
    'source',
    'stream',
    'status',
    'service',
    'warehouse',
    'difference',
    'amount check',
    'method',
  ];
  const body = rows.map((r) => [
    r.source,
    r.stream,
    r.status,
    String(r.service),
    String(r.warehouse),
    r.difference > 0 ? `+${r.difference}` : String(r.difference),
    amountCheck(r),
    r.method,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((line) => (line[i] as string).length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  const mismatches = rows.filter(isMismatch).length;
  return [
    `reconcile ${day} (difference = service - warehouse)`,
    line(header),
    ...body.map(line),
    mismatches === 0 ? 'no differences' : `${mismatches} row(s) differ`,
    '',
  ].join('\n');
}

function amountCheck(r: ReconcileRow): string {
  if (r.serviceAmount === null || r.warehouseAmount === null) return '-';
  return canonicalDecimal(r.serviceAmount) === canonicalDecimal(r.warehouseAmount)
    ? `= ${r.warehouseAmount}`
    : `${r.serviceAmount} vs ${r.warehouseAmount}`;
}
