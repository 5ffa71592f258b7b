/**
 * Reconcile arithmetic on records (pure): the day as the service lists it against the day as the
 * warehouse holds it, with the day's quarantined records (sync_rejects) in between. It yields the rows
 * per status (service, warehouse, quarantined, unexplained, amounts where the service's figures allow)
 * and the records behind every difference, so that nothing is only a count.
 *
 * A service record is `quarantined` when paysync holds it in sync_rejects and not in the warehouse: by
 * id, or, for a record without a readable id (no id can match), against the day's anonymous rejects of
 * the same status, one for one. What is left is `unexplained`: unexplained = service − warehouse −
 * quarantined, per status, and a record whose status differs counts in both statuses.
 */
import { canonicalDecimal, sumDecimals } from './decimal.js';
import type { ReconcileRow } from './reconcile-row.js';

export interface ServiceRecord {
  /** The record's id, or null when the service sent none usable. */
  id: string | null;
  status: string;
  /** Exact decimal text, or null when the service's amount is not an exact number. */
  amount: string | null;
}

export interface WarehouseRecord {
  id: string;
  status: string;
  amount: string;
}

export interface DayRejects {
  /** Open rejects of the stream by record id: the reason. */
  byId: ReadonlyMap<string, string>;
  /** Open rejects without a readable id whose raw createdAt falls in the day: status and reason. */
  anonymous: ReadonlyArray<{ status: string; reason: string }>;
}

export type DifferenceKind = 'missing_in_warehouse' | 'missing_at_source' | 'different' | 'quarantined';

export interface RecordDifference {
  source: string;
  stream: 'payments' | 'transfers';
  kind: DifferenceKind;
  id: string | null;
  serviceStatus: string | null;
  warehouseStatus: string | null;
  serviceAmount: string | null;
  warehouseAmount: string | null;
  reason: string | null;
}

export interface DayComparison {
  rows: ReconcileRow[];
  differences: RecordDifference[];
}

interface StatusTotals {
  service: number;
  warehouse: number;
  quarantined: number;
  serviceAmounts: Array<string | null>;
  warehouseAmounts: string[];
}

const empty = (): StatusTotals => ({
  service: 0,
  warehouse: 0,
  quarantined: 0,
  serviceAmounts: [],
  warehouseAmounts: [],
});

const sameAmount = (a: string | null, b: string) => a !== null && canonicalDecimal(a) === canonicalDecimal(b);

export function compareDay(
  base: Pick<ReconcileRow, 'source' | 'stream' | 'method'>,
  service: readonly ServiceRecord[],
  warehouse: readonly WarehouseRecord[],
  rejects: DayRejects,
  alwaysShow: readonly string[] = [],
): DayComparison {
  const totals = new Map<string, StatusTotals>(alwaysShow.map((s) => [s, empty()]));
  const at = (status: string) => totals.get(status) ?? totals.set(status, empty()).get(status)!;
  const stored = new Map(warehouse.map((w) => [w.id, w]));
  const differences: RecordDifference[] = [];
  const diff = (d: Omit<RecordDifference, 'source' | 'stream'>) =>
    differences.push({ source: base.source, stream: base.stream, ...d });
  const anonymous = new Map<string, string[]>();
  for (const a of rejects.anonymous) anonymous.set(a.status, [...(anonymous.get(a.status) ?? []), a.reason]);
  const listed = new Set<string>();

  for (const s of service) {
    const t = at(s.status);
    t.service += 1;
    const w = s.id === null ? undefined : stored.get(s.id);
    if (s.id !== null) listed.add(s.id);
    const reason = s.id === null ? (anonymous.get(s.status)?.shift() ?? null) : rejects.byId.get(s.id);
    const record = { id: s.id, serviceStatus: s.status, serviceAmount: s.amount };
    if (!w && reason) {
      t.quarantined += 1;
      diff({ ...record, kind: 'quarantined', warehouseStatus: null, warehouseAmount: null, reason });
      continue;
    }
    t.serviceAmounts.push(s.amount);
    if (!w) {
      diff({
        ...record,
        kind: 'missing_in_warehouse',
        warehouseStatus: null,
        warehouseAmount: null,
        reason: null,
      });
    } else if (w.status !== s.status || !sameAmount(s.amount, w.amount)) {
      diff({
        ...record,
        kind: 'different',
        warehouseStatus: w.status,
        warehouseAmount: w.amount,
        reason: null,
      });
    }
  }
  for (const w of warehouse) {
    const t = at(w.status);
    t.warehouse += 1;
    t.warehouseAmounts.push(w.amount);
    if (!listed.has(w.id)) {
      diff({
        kind: 'missing_at_source',
        id: w.id,
        serviceStatus: null,
        warehouseStatus: w.status,
        serviceAmount: null,
        warehouseAmount: w.amount,
        reason: null,
      });
    }
  }
  const rows = [...totals.keys()].sort().map((status) => rowOf(base, status, totals.get(status)!));
  return { rows, differences };
}

function rowOf(
  base: Pick<ReconcileRow, 'source' | 'stream' | 'method'>,
  status: string,
  t: StatusTotals,
): ReconcileRow {
  const exact = t.serviceAmounts.every((a): a is string => a !== null);
  return {
    ...base,
    status,
    service: t.service,
    warehouse: t.warehouse,
    difference: t.service - t.warehouse,
    quarantined: t.quarantined,
    unexplained: t.service - t.warehouse - t.quarantined,
    serviceAmount: exact ? sumDecimals(t.serviceAmounts as string[]) : null,
    warehouseAmount: sumDecimals(t.warehouseAmounts),
  };
}
