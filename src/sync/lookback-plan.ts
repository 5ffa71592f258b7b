/**
 * Which reads of a live tick's lookback can be skipped, and on what evidence (pure; lookback.ts gathers
 * and acts). The lookback re-reads the days before the checkpoint for two reasons only: records that
 * appear late (created there, listed by the service after the tick that read past them), and records
 * still open (INIT, PENDING) that may since have moved. A final record (COMPLETE, FAILED, TIMEOUT) is
 * never read again for its own sake. So:
 *
 * 1. **Late records.** One request with `size` 1 over the whole settled part of the lookback gives the
 *    service's `total` there. When it equals what the warehouse holds in the same range, counted as the
 *    service counts (heldInRange: valid and quarantined, once per id; unknown when a record sits on a
 *    bound whose inclusivity is open), no record appeared late. Otherwise, or with bare arrays (no
 *    `total`), every settled window is read in full, as before.
 * 2. **Open records.** A settled window holding no open record is done. With open records, and when the
 *    probe saw the service honour the `status` filter, the list of each open status held there (INIT,
 *    PENDING) is read over the range, if cheaper than reading those windows in full: every record in
 *    them is loaded; an open record held but in none of them has moved on and is read on its own (a
 *    narrow window around its creation), so that it lands in its final state. A list holding a record in another status (the filter is not
 *    honoured after all), an incomplete list, or more moved records than a full read would cost: those
 *    windows are read in full.
 */

export interface SettledWindow {
  /** Records the warehouse holds there, and how many of them are open in each status (INIT, PENDING). */
  held: number;
  open: Readonly<Record<string, number>>;
}

const openIn = (w: SettledWindow) => Object.values(w.open).reduce((n, c) => n + c, 0);

/** Requests the status lists cost for these windows: each open status's list, at least one page. */
function statusCost(windows: readonly SettledWindow[], pageSize: number): number {
  const byStatus = new Map<string, number>();
  for (const w of windows)
    for (const [status, n] of Object.entries(w.open)) byStatus.set(status, (byStatus.get(status) ?? 0) + n);
  let cost = 0;
  for (const n of byStatus.values()) if (n > 0) cost += Math.max(1, Math.ceil(n / pageSize));
  return cost;
}

export interface LookbackEvidence {
  /** The service's `total` for the range (null: it sent none). */
  total: number | null;
  /** What the warehouse holds in the range as the service counts it (null: cannot tell). */
  held: number | null;
  windows: readonly SettledWindow[];
  /** The probe saw the payments lists honour `status`. */
  statusFilter: boolean;
  pageSize: number;
}

/** Per settled window: done (nothing in it can have changed), its open records read by status, or a full read. */
export type WindowPlan = 'done' | 'by-status' | 'full';

export interface LookbackPlan {
  windows: WindowPlan[];
  /** Why, in words, for the sync log and the debug log. */
  why: string;
}

/** Requests a full read of a window costs: its pages, at least one. */
function fullCost(held: number, pageSize: number): number {
  return Math.max(1, Math.ceil(held / pageSize));
}

/**
 * Whether asking the service for its count can pay: the count is one request, so only when the best it
 * can lead to (settled windows done, open ones read by status) plus that request costs less than reading
 * every settled window in full. Small days in large pages are cheaper read than counted.
 */
export function worthCounting(e: Omit<LookbackEvidence, 'total'>): boolean {
  if (e.held === null || e.windows.length === 0) return false;
  const full = e.windows.reduce((n, w) => n + fullCost(w.held, e.pageSize), 0);
  const best = decideLookback({ ...e, total: e.held });
  const open = e.windows.filter((_, i) => best.windows[i] !== 'done');
  const rest = best.windows.includes('by-status')
    ? statusCost(open, e.pageSize)
    : open.reduce((n, w) => n + fullCost(w.held, e.pageSize), 0);
  return 1 + rest < full;
}

export function decideLookback(e: LookbackEvidence): LookbackPlan {
  const all = (plan: WindowPlan, why: string): LookbackPlan => ({ windows: e.windows.map(() => plan), why });
  if (e.total === null) return all('full', 'the service sends no total: every window is read');
  if (e.held === null) return all('full', 'a record held on a bound of the range: every window is read');
  if (e.total !== e.held)
    return all('full', `the service lists ${e.total} records, ${e.held} are held: every window is read`);
  const open = e.windows.filter((w) => openIn(w) > 0);
  if (open.length === 0) return all('done', `${e.total} records held, none open: nothing can have changed`);
  const openRecords = open.reduce((n, w) => n + openIn(w), 0);
  const full = open.reduce((n, w) => n + fullCost(w.held, e.pageSize), 0);
  const byStatus = statusCost(open, e.pageSize);
  const readOpen: WindowPlan = e.statusFilter && byStatus < full ? 'by-status' : 'full';
  return {
    windows: e.windows.map((w) => (openIn(w) > 0 ? readOpen : 'done')),
    why:
      `${e.total} records held; ${openRecords} open in ${open.length} window(s), ` +
      (readOpen === 'by-status'
        ? `read by status (${byStatus} requests against ${full})`
        : e.statusFilter
          ? `read in full (cheaper than by status: ${full} against ${byStatus})`
          : 'read in full (the probe has not seen the service honour the status filter)'),
  };
}

/** What the status lists showed. */
export interface StatusEvidence {
  /** Both lists ended on evidence (every record of their `total`, or an empty page). */
  complete: boolean;
  /** Records listed in another status than asked, or quarantined. */
  off: number;
  /** Open records held in the by-status windows but in neither list: they moved on. */
  moved: number;
  /** Requests a full read of the by-status windows would cost. */
  fullCost: number;
}

/** After the status lists: the moved records read one by one, or the windows read in full. */
export function decideMoved(e: StatusEvidence): { read: 'each' | 'full'; why: string } {
  if (!e.complete) return { read: 'full', why: 'a status list did not end on evidence' };
  if (e.off > 0)
    return { read: 'full', why: `${e.off} record(s) listed in another status: the filter is not honoured` };
  if (e.moved >= e.fullCost)
    return { read: 'full', why: `${e.moved} open records moved on: a full read is cheaper` };
  return { read: 'each', why: `${e.moved} open record(s) moved on, each read on its own` };
}
