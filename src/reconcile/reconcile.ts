/**
 * `paysync reconcile --day D`: for each source, the day's payments and transfers at the service against
 * the warehouse, per status, with the day's quarantined records explaining what they can; the result
 * (rows and the records behind every difference) is recorded in reporting.reconcile_results and
 * reconcile_records, and a day that has a pack has it refreshed (refreshPack).
 *
 * Payments are first counted with a handful of requests (wrapper totals, service-counts.ts); when that
 * is not possible, or finds a difference, the day is read whole and compared record by record
 * (record-diff.ts), so a lying or inconsistent `total` cannot fake a mismatch and every difference is
 * named. Where both were read, the counts by status are also set against the warehouse with copies
 * counted as sync counts them (counted-copies.ts): a copy listed in place of a record never listed
 * matches record by record, and only the counts show it. Transfers have no date filter: their day is read from the whole list, once per reconcile run
 * however many days it covers.
 */
import type { Source } from '../config/settings.js';
import { isRetryable, PaysyncError, UpstreamError } from '../errors.js';
import type { Runtime } from '../sync/services.js';
import { withReconcileLease, type LeaseOptions } from './reconcile-lock.js';
import { ENDPOINTS } from '../upstream/client.js';
import { dayWindow, type Window } from '../sync/windows.js';
import { PAYMENT_STATUSES } from '../upstream/schemas.js';
import { copiedWindows, dayRejects, talliesOf, warehouseDay, type StreamName } from './day-records.js';
import { countCopies, flagCountedCopies, steadyCounts } from './counted-copies.js';
import { exportDay } from './export-day.js';
import { dayFolder, readLatestManifest } from './pack-disk.js';
import { compareDay, type DayComparison, type RecordDifference, type ServiceRecord } from './record-diff.js';
import { compareTallies, isMismatch, type ReconcileRow } from './reconcile-table.js';
import { recordReconcile } from './reconcile-store.js';
import {
  countByTotals,
  listPaymentsDay,
  listTransfers,
  paymentsFetch,
  transfersOfDay,
  type CountOptions,
  type Seen,
} from './service-counts.js';

export interface ReconcileResult {
  day: string;
  rows: ReconcileRow[];
  /** Every record behind a difference, quarantined ones included. */
  differences: RecordDifference[];
  /** Rows with an unexplained difference (0: the warehouse matches the service, quarantine aside). */
  mismatches: number;
  quarantined: number;
}

async function reconcilePayments(runtime: Runtime, source: Source, w: Window): Promise<DayComparison> {
  const o = countOptions(runtime, source, 'payments');
  const fetch = paymentsFetch(runtime.client(source));
  const warehouse = await warehouseDay(runtime.pool, source.name, 'payments', w);
  const base = { source: source.name, stream: 'payments' as const };
  const fast = await countByTotals(fetch, w, o);
  if (fast) {
    const rows = compareTallies(
      { ...base, method: fast.method },
      fast.byStatus,
      talliesOf(warehouse),
      PAYMENT_STATUSES,
    );
    if (!rows.some(isMismatch)) return { rows, differences: [] };
  }
  const { records: service, twice } = await listPaymentsDay(fetch, w, o);
  const method = fast ? 'paged-confirm' : 'paged';
  const compared = await compareWith(runtime, { ...base, method }, service, warehouse, w, PAYMENT_STATUSES);
  if (!fast) return compared;
  // The counts by status are the second line of evidence for copies (counted-copies.ts). They are taken
  // again after the list: a status whose count moved meanwhile (a record changed status, one arrived
  // late) says nothing about copies.
  const again = await countByTotals(fetch, w, o);
  if (!again) return compared;
  const spans = await copiedWindows(runtime.pool, source.name, 'payments', w);
  const pad = runtime.settings.WINDOW_PAD;
  const recorded = (at: number | null) =>
    at !== null && spans.some((s) => at >= s.start.getTime() - pad && at < s.end.getTime() + pad);
  return flagCountedCopies(
    compared,
    steadyCounts(fast.byStatus, again.byStatus),
    countCopies(twice, recorded),
  );
}

async function reconcileTransfers(
  runtime: Runtime,
  source: Source,
  w: Window,
  listing: TransferListing,
): Promise<DayComparison> {
  const warehouse = await warehouseDay(runtime.pool, source.name, 'transfers', w);
  const service = await listing(source, w);
  const base = { source: source.name, stream: 'transfers' as const, method: 'paged' };
  return compareWith(runtime, base, service, warehouse, w);
}

async function compareWith(
  runtime: Runtime,
  base: { source: string; stream: StreamName; method: string },
  service: readonly ServiceRecord[],
  warehouse: Awaited<ReturnType<typeof warehouseDay>>,
  w: Window,
  alwaysShow: readonly string[] = [],
): Promise<DayComparison> {
  const stored = new Set(warehouse.map((r) => r.id));
  const unmatched = service.flatMap((r) => (r.id !== null && !stored.has(r.id) ? [r.id] : []));
  const rejects = await dayRejects(runtime.pool, base.source, base.stream, w, unmatched);
  return compareDay(base, service, warehouse, rejects, alwaysShow);
}

/** The day's transfers of a source; one reconcile run reads the whole list once per source. */
export type TransferListing = (source: Source, w: Window) => Promise<ServiceRecord[]>;

export function transferListing(runtime: Runtime): TransferListing {
  const lists = new Map<string, Promise<Seen[]>>();
  return async (source, w) => {
    let all = lists.get(source.name);
    if (!all) {
      all = listTransfers(runtime.client(source), countOptions(runtime, source, 'transfers'));
      lists.set(source.name, all);
    }
    return transfersOfDay(await all, w);
  };
}

function countOptions(runtime: Runtime, source: Source, stream: StreamName): CountOptions {
  const paymentsEndpoint =
    source.scope === 'api-key' ? ENDPOINTS.paymentsByApiKey : ENDPOINTS.paymentsByOrganisation;
  return {
    pageSize: runtime.settings.PAGE_SIZE,
    padMs: runtime.settings.WINDOW_PAD,
    maxPages: runtime.syncOptions.maxPagesPerRead,
    endpoint: stream === 'payments' ? paymentsEndpoint : ENDPOINTS.transfers,
    source: source.name,
  };
}

export interface ReconcileOptions {
  /** The clock of the settle horizon when a pack is refreshed (tests: the simulator's). */
  now?: Date;
  /** False when the caller exports the day itself right after (the daily job). */
  refreshPack?: boolean;
}

/**
 * Reconciles each day (one transfer listing per source for them all) and records each result. Each day
 * is reconciled under its lease: one reconcile per day at a time across workers.
 */
export async function reconcileDays(
  runtime: Runtime,
  days: readonly string[],
  options: ReconcileOptions & LeaseOptions = {},
): Promise<ReconcileResult[]> {
  const listing = transferListing(runtime);
  const out: ReconcileResult[] = [];
  for (const day of days) {
    const result = await withReconcileLease(
      runtime.pool,
      day,
      async () => {
        const r = await reconcileUnlocked(runtime, day, listing);
        if (options.refreshPack !== false) await refreshPack(runtime, day, options.now);
        return r;
      },
      options,
    );
    out.push(result);
  }
  return out;
}

export async function reconcileDay(
  runtime: Runtime,
  day: string,
  options: ReconcileOptions & LeaseOptions = {},
): Promise<ReconcileResult> {
  return (await reconcileDays(runtime, [day], options))[0]!;
}

/**
 * One comparison of the day, recorded. The caller holds the day's lease. A service that cannot be reached
 * (after the client's own retries) records nothing and says so: it is not a difference.
 */
export async function reconcileUnlocked(
  runtime: Runtime,
  day: string,
  listing: TransferListing = transferListing(runtime),
): Promise<ReconcileResult> {
  const w = dayWindow(day, runtime.settings.REPORT_TIMEZONE);
  const rows: ReconcileRow[] = [];
  const differences: RecordDifference[] = [];
  for (const source of runtime.settings.sources) {
    try {
      for (const c of [
        await reconcilePayments(runtime, source, w),
        await reconcileTransfers(runtime, source, w, listing),
      ]) {
        rows.push(...c.rows);
        // not push(...): a day the service does not list has a difference per record, and spreading
        // 100k+ arguments overflows the call stack (RangeError)
        for (const d of c.differences) differences.push(d);
      }
    } catch (error) {
      if (error instanceof UpstreamError && isRetryable(error)) {
        throw new ReconcileUnreachableError(day, source.name, error);
      }
      throw error;
    }
  }
  await recordReconcile(runtime.pool, day, { rows, differences }, new Date());
  return {
    day,
    rows,
    differences,
    mismatches: rows.filter(isMismatch).length,
    quarantined: rows.reduce((n, r) => n + r.quarantined, 0),
  };
}

/** The service could not be reached for a reconcile: nothing was recorded. Retryable (later). */
export class ReconcileUnreachableError extends PaysyncError {
  constructor(day: string, source: string, cause: UpstreamError) {
    super(
      'RECONCILE_UNREACHABLE',
      `could not reach the service of source ${source} to reconcile ${day} (${cause.message}): nothing ` +
        'recorded and no difference reported; retry later (the daily job retries by itself)',
      { cause },
    );
  }
}

/**
 * A day that already has a pack follows its reconcile at once: the pack is exported again, which writes
 * a new version only if its files or its state changed (say provisional to final), and otherwise puts
 * the latest result and the state's reason into the top manifest. A day published `incomplete` stays
 * so until sync covers it.
 */
export async function refreshPack(runtime: Runtime, day: string, now: Date | undefined): Promise<void> {
  const dayDir = await dayFolder(runtime.settings.EXPORT_DIR, day, false);
  if (!dayDir || !(await readLatestManifest(dayDir))) return;
  await exportDay(runtime, day, { allowIncomplete: true, ...(now ? { now } : {}) });
}
