/**
 * `paysync reconcile --day D`: for each source, the day's payments per status and the transfer list's
 * total at the service against the warehouse; the result is recorded (reporting.reconcile_results) and
 * written into the day's top manifest when the day has a pack. How the service's side is counted under
 * the interface's open points is in service-counts.ts; a difference found with a wrapper total is
 * confirmed by paging before it is reported, so a lying or inconsistent `total` cannot fake a mismatch.
 */
import { resolve, join } from 'node:path';
import type { Pool } from 'pg';
import type { Source } from '../config/settings.js';
import type { Runtime } from '../runtime.js';
import { ENDPOINTS } from '../upstream/client.js';
import { dayWindow, type Window } from '../sync/windows.js';
import { PAYMENT_STATUSES } from '../upstream/schemas.js';
import { manifestText, readLatestManifest, replaceFileAtomically } from './manifest.js';
import { withDayLock } from './pack-lock.js';
import { compareTallies, isMismatch, type ReconcileRow, type Tally } from './reconcile-table.js';
import { latestReconcile, recordReconcile } from './reconcile-store.js';
import {
  countByTotals,
  countPagedDay,
  countTransfers,
  paymentsFetch,
  type CountOptions,
} from './service-counts.js';

export interface ReconcileResult {
  day: string;
  rows: ReconcileRow[];
  mismatches: number;
}

async function warehousePayments(pool: Pool, source: string, w: Window): Promise<Map<string, Tally>> {
  const { rows } = await pool.query(
    `SELECT status, count(*)::bigint AS n, sum(amount)::text AS amount FROM reporting.payments
      WHERE source = $1 AND created_at >= $2 AND created_at < $3 GROUP BY status`,
    [source, w.start, w.end],
  );
  return new Map(rows.map((r) => [r.status as string, { count: r.n as number, amount: r.amount as string }]));
}

async function reconcilePayments(runtime: Runtime, source: Source, w: Window): Promise<ReconcileRow[]> {
  const o = countOptions(runtime, source, 'payments');
  const fetch = paymentsFetch(runtime.client(source));
  const warehouse = await warehousePayments(runtime.pool, source.name, w);
  const base = { source: source.name, stream: 'payments' as const };
  const fast = await countByTotals(fetch, w, o);
  if (fast) {
    const rows = compareTallies({ ...base, method: fast.method }, fast.byStatus, warehouse, PAYMENT_STATUSES);
    if (!rows.some(isMismatch)) return rows;
  }
  const paged = await countPagedDay(fetch, w, o);
  const method = fast ? 'paged-confirm' : 'paged';
  const rows = compareTallies({ ...base, method }, paged.byStatus, warehouse, PAYMENT_STATUSES);
  if (paged.unreadable > 0) {
    rows.push({
      ...base,
      method,
      status: '(unreadable)',
      service: paged.unreadable,
      warehouse: 0,
      difference: paged.unreadable,
      serviceAmount: null,
      warehouseAmount: null,
    });
  }
  return rows;
}

/** Transfers have no date filter: the whole list's size against every transfer this source stored. */
async function reconcileTransfers(runtime: Runtime, source: Source): Promise<ReconcileRow> {
  const o = countOptions(runtime, source, 'transfers');
  const client = runtime.client(source);
  const { rows } = await runtime.pool.query(
    `SELECT count(*)::bigint AS n FROM reporting.transfers WHERE source = $1`,
    [source.name],
  );
  const warehouse = rows[0].n as number;
  let counted = await countTransfers(client, o, true);
  if (counted.count !== warehouse && counted.method === 'wrapper-total') {
    counted = { ...(await countTransfers(client, o, false)), method: 'paged' };
  }
  return {
    source: source.name,
    stream: 'transfers',
    status: '(whole list)',
    service: counted.count,
    warehouse,
    difference: counted.count - warehouse,
    serviceAmount: null,
    warehouseAmount: null,
    method: counted.method,
  };
}

function countOptions(runtime: Runtime, source: Source, stream: 'payments' | 'transfers'): CountOptions {
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

export async function reconcileDay(runtime: Runtime, day: string): Promise<ReconcileResult> {
  const w = dayWindow(day, runtime.settings.REPORT_TIMEZONE);
  const rows: ReconcileRow[] = [];
  for (const source of runtime.settings.sources) {
    rows.push(...(await reconcilePayments(runtime, source, w)));
    rows.push(await reconcileTransfers(runtime, source));
  }
  await recordReconcile(runtime.pool, day, rows, new Date());
  await noteInManifest(runtime, day);
  return { day, rows, mismatches: rows.filter(isMismatch).length };
}

/**
 * Puts the latest result into the day's top manifest (replaced atomically; version folders are never
 * touched). A day without a pack yet gets it in its first manifest, from the table.
 */
async function noteInManifest(runtime: Runtime, day: string): Promise<void> {
  const dayDir = resolve(runtime.settings.EXPORT_DIR, day);
  await withDayLock(runtime.pool, day, async (client) => {
    const latest = await readLatestManifest(dayDir);
    if (!latest) return;
    const reconcile = await latestReconcile(client, day);
    await replaceFileAtomically(join(dayDir, 'manifest.json'), manifestText({ ...latest, reconcile }));
  });
}
