/**
 * Reconcile arithmetic (pure): the rows per source, stream and status, and the table `paysync reconcile`
 * prints. `difference` is service − warehouse; `quarantined` is how much of it is explained by records
 * paysync holds in sync_rejects; `unexplained` = difference − quarantined. Positive means the warehouse
 * lacks records, negative that it holds records the service does not list in that status (a status
 * moved since the last sync, or a record the service dropped).
 */
import { oneLine } from '../terminal-text.js';
import { canonicalDecimal } from './decimal.js';
import type { RecordDifference } from './record-diff.js';
import type { ReconcileRow, Tally } from './reconcile-row.js';

export type { ReconcileRow, Tally } from './reconcile-row.js';

/** Rows from counts alone (the wrapper-total method): nothing quarantined is known, amounts are not. */
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
      quarantined: 0,
      unexplained: s.count - w.count,
      serviceAmount: s.amount,
      warehouseAmount: w.amount,
    };
  });
}

/** Whether the amounts were compared: only where the service's figures give an exact sum. */
export const amountCompared = (row: ReconcileRow): boolean =>
  row.serviceAmount !== null && row.warehouseAmount !== null;

/**
 * A row nothing explains: a count difference beyond the quarantined records, or (where compared, and
 * the counts agree) a different exact amount. A quarantined record alone is never a mismatch.
 */
export function isMismatch(row: ReconcileRow): boolean {
  if (row.unexplained !== 0) return true;
  if (!amountCompared(row) || row.difference !== row.quarantined) return false;
  return canonicalDecimal(row.serviceAmount!) !== canonicalDecimal(row.warehouseAmount!);
}

const signed = (n: number) => (n > 0 ? `+${n}` : String(n));

export interface TableOptions {
  /** Records listed under the table; the summary line counts them all. */
  differences?: readonly RecordDifference[];
  /** How many records to list (the rest are counted; `--json` has them all). */
  limit?: number;
}

export function formatTable(day: string, rows: readonly ReconcileRow[], options: TableOptions = {}): string {
  const header = ['source', 'stream', 'status', 'service', 'warehouse', 'quarantined', 'unexplained'];
  // a status is the service's text: a line break or tab in it would forge rows of the table
  const body = rows.map((r) => [
    r.source,
    r.stream,
    oneLine(r.status),
    String(r.service),
    String(r.warehouse),
    String(r.quarantined),
    signed(r.unexplained),
    amountCheck(r),
    r.method,
  ]);
  const full = [...header, 'amount check', 'method'];
  const widths = full.map((h, i) => Math.max(h.length, ...body.map((line) => (line[i] as string).length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd();
  const mismatches = rows.filter(isMismatch).length;
  const quarantined = rows.reduce((n, r) => n + r.quarantined, 0);
  const verdict =
    mismatches === 0
      ? quarantined === 0
        ? 'no differences'
        : `no unexplained differences; ${quarantined} record(s) quarantined explain the rest`
      : `${mismatches} row(s) with unexplained differences`;
  return [
    `reconcile ${day} (unexplained = service - warehouse - quarantined)`,
    line(full),
    ...body.map(line),
    verdict,
    ...recordLines(options.differences ?? [], options.limit ?? 20),
    '',
  ].join('\n');
}

function amountCheck(r: ReconcileRow): string {
  if (r.serviceAmount === null) return `not compared (${r.method} gives no amounts)`;
  if (r.warehouseAmount === null) return '-';
  return canonicalDecimal(r.serviceAmount) === canonicalDecimal(r.warehouseAmount)
    ? `= ${r.warehouseAmount}`
    : `${r.serviceAmount} vs ${r.warehouseAmount}`;
}

const KIND_LABEL: Record<RecordDifference['kind'], string> = {
  missing_in_warehouse: 'missing in warehouse',
  missing_at_source: 'missing at source',
  different: 'different',
  quarantined: 'quarantined',
};

/** One line per record (the first `limit`), after a summary line counting each kind. */
export function recordLines(differences: readonly RecordDifference[], limit: number): string[] {
  if (differences.length === 0) return [];
  const counts = new Map<string, number>();
  for (const d of differences) counts.set(KIND_LABEL[d.kind], (counts.get(KIND_LABEL[d.kind]) ?? 0) + 1);
  const summary = [...counts].map(([k, n]) => `${n} ${k}`).join(', ');
  const lines = differences.slice(0, limit).map((d) => `  ${oneLine(describeDifference(d))}`);
  const more = differences.length - lines.length;
  return [
    `records: ${summary}`,
    ...lines,
    ...(more > 0 ? [`  … and ${more} more (--json lists them all)`] : []),
  ];
}

/** A difference's reason, when it has one (a count without a record: counted-copies.ts). */
const because = (d: RecordDifference): string => (d.reason ? `: ${d.reason}` : '');

export function describeDifference(d: RecordDifference): string {
  const id = d.id ?? '(no id)';
  const where = `${d.source}/${d.stream} ${id}`;
  switch (d.kind) {
    case 'missing_in_warehouse':
      return `${where}: missing in warehouse (service: ${d.serviceStatus} ${d.serviceAmount ?? '?'})${because(d)}`;
    case 'missing_at_source':
      return `${where}: missing at source (warehouse: ${d.warehouseStatus} ${d.warehouseAmount ?? '?'})${because(d)}`;
    case 'quarantined':
      return `${where}: quarantined (${d.serviceStatus}): ${d.reason}`;
    default: {
      const parts: string[] = [];
      if (d.serviceStatus !== d.warehouseStatus)
        parts.push(`status ${d.warehouseStatus} in warehouse, ${d.serviceStatus} at service`);
      if (
        d.serviceAmount === null ||
        d.warehouseAmount === null ||
        canonicalDecimal(d.serviceAmount) !== canonicalDecimal(d.warehouseAmount)
      )
        parts.push(
          `amount ${d.warehouseAmount} in warehouse, ${d.serviceAmount ?? '(not exact)'} at service`,
        );
      return `${where}: ${parts.join('; ')}`;
    }
  }
}
