/**
 * The sync engine's promise, end to end on real HTTP, PostgreSQL and Redis: after a tick the warehouse
 * equals the service, whatever the service does at its open points.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { UpstreamAuthError } from '../../src/errors.js';
import type { SimOptions } from '../../src/sim/types.js';
import { parseWindowKey } from '../../src/sync/checkpoints.js';
import { tickPayments } from '../../src/sync/tick.js';
import { runPaymentsWindow } from '../../src/sync/window-run.js';
import {
  paymentDifferences,
  startHarness,
  syncAll,
  transferDifferences,
  type Harness,
} from '../helpers/sync-harness.js';

let h: Harness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

const SWITCH_CASES: Array<[string, SimOptions['switches'], Record<string, string>?]> = [
  [
    'page wrapper, oldest first, inclusive bounds',
    { shape: 'wrapper', paymentOrder: 'asc', transferOrder: 'asc' },
  ],
  [
    'bare arrays capped at 10 per page, newest first',
    { shape: 'array', pageCap: 10, paymentOrder: 'desc', transferOrder: 'desc' },
  ],
  [
    'alternating shapes, unordered, exclusive bounds',
    {
      shape: 'alternate',
      paymentOrder: 'unordered',
      transferOrder: 'unordered',
      dateFromInclusive: false,
      dateToInclusive: false,
    },
  ],
  ['a service that ignores the date filter', { shape: 'wrapper', ignoreDateFilter: true }],
  [
    'a wrapper with a silent cap smaller than the page size',
    { shape: 'wrapper', pageCap: 7, paymentOrder: 'desc' },
  ],
];

describe('a live tick copies the service exactly', () => {
  it.each(SWITCH_CASES)('%s', async (_label, switches) => {
    h = await startHarness({ name: 'live', sim: { switches } });
    const { payments, transfers } = await syncAll(h);
    expect(payments.windows.every((w) => w.outcome === 'complete')).toBe(true);
    expect(transfers?.outcome).toBe('complete');
    expect(await paymentDifferences(h)).toEqual([]);
    expect(await transferDifferences(h)).toEqual([]);
    expect(h.sim.payments(h.org).length).toBeGreaterThan(100);
    expect(payments.checkpoint).not.toBeNull();
  });
});

describe('pages are loaded in batches of PAGE_SIZE', () => {
  it('a read that fails part-way keeps the pages it read, even when they were still short of a batch', async () => {
    // capped at 10 a page with PAGE_SIZE 100, page 0 waits for nine more before it is written; then page 1
    // repeats page 0 (the service ignores `page`) and the read fails: page 0's records must still be stored
    h = await startHarness({
      name: 'batch',
      sim: { switches: { pageCap: 10, ignorePage: true } },
      env: { PAGE_SIZE: '100' },
    });
    const deps = h.runtime.syncContext(h.settings.sources[0]!);
    const { windows } = await tickPayments(deps);
    expect(windows.some((w) => w.outcome !== 'complete')).toBe(true);
    const { rows } = await h.runtime.pool.query<{ id: string; amount: string; status: string }>(
      'SELECT id, amount::text, status FROM reporting.payments',
    );
    expect(rows.length).toBeGreaterThan(0);
    const truth = new Map(h.sim.payments(h.org).map((p) => [p.id, p]));
    for (const row of rows) {
      expect(truth.has(row.id)).toBe(true);
      expect(row.status).toBe(truth.get(row.id)?.status);
    }
    h.sim.setSwitches({ pageCap: null, ignorePage: false });
    await syncAll(h);
    expect(await paymentDifferences(h)).toEqual([]);
  });
});

describe('status changes and late records', () => {
  it('picks up status changes after time passes and records each transition once in the history', async () => {
    h = await startHarness({ name: 'status' });
    await syncAll(h);
    const before = await h.runtime.pool.query(
      `SELECT count(*)::int AS n FROM reporting.payment_status_history`,
    );
    h.sim.advance(6 * 3600_000);
    await syncAll(h);
    expect(await paymentDifferences(h)).toEqual([]);
    expect(await transferDifferences(h)).toEqual([]);
    const after = await h.runtime.pool.query(
      `SELECT count(*)::int AS n FROM reporting.payment_status_history`,
    );
    expect(after.rows[0].n).toBeGreaterThan(before.rows[0].n);
    const dupes = await h.runtime.pool.query(
      `SELECT payment_id, status, count(*) FROM reporting.payment_status_history GROUP BY 1, 2 HAVING count(*) > 1`,
    );
    expect(dupes.rows).toEqual([]);
  });

  it('catches records that arrive while it pages (drift) and ends every window complete', async () => {
    h = await startHarness({
      name: 'drift',
      sim: { switches: { shape: 'wrapper', paymentOrder: 'asc', driftPerPage: 1 } },
      env: { SYNC_LOOKBACK: '10d' }, // the simulator backdates drift records anywhere in a window
    });
    const { payments } = await syncAll(h);
    expect(payments.windows.every((w) => w.outcome === 'complete')).toBe(true);
    expect(payments.windows.some((w) => w.reads > 1)).toBe(true); // the shortfall was seen and re-read
    // records created after a window's last page are the next tick's: once the service is quiet, all land
    h.sim.setSwitches({ driftPerPage: 0 });
    await syncAll(h);
    expect(await paymentDifferences(h)).toEqual([]);
  });
});

describe('bad input and faults', () => {
  it('quarantines malformed records with their reason while the rest of their page lands', async () => {
    h = await startHarness({ name: 'malformed', sim: { malformed: 7 } });
    await syncAll(h);
    expect(await paymentDifferences(h)).toEqual([]);
    const rejects = await h.runtime.pool.query(`SELECT stream, reason FROM reporting.sync_rejects`);
    expect(rejects.rows.length).toBeGreaterThanOrEqual(7);
    for (const r of rejects.rows) expect(r.reason).toMatch(/\S/);
  });

  it('heals through 429 storms with Retry-After and 5xx bursts', async () => {
    h = await startHarness({
      name: 'storm',
      sim: { switches: { rateLimitRate: 0.3, retryAfterSeconds: 0, serverErrorRate: 0.3 } },
      env: { UPSTREAM_RETRIES: '8' },
    });
    // a window whose retries run out is read again by the next tick; a few ticks settle everything
    for (let tick = 0; tick < 4; tick++) {
      const { payments, transfers } = await syncAll(h);
      if (payments.windows.every((w) => w.outcome === 'complete') && transfers?.outcome === 'complete') break;
    }
    expect(await paymentDifferences(h)).toEqual([]);
    expect(await transferDifferences(h)).toEqual([]);
    const statuses = h.sim.requestLog().map((r) => r.status);
    expect(statuses).toContain(429);
    expect(statuses.some((s) => s >= 500)).toBe(true);
  });

  it('fails fast on a wrong key: one request, no retry storm, no checkpoint moved', async () => {
    h = await startHarness({ name: 'badkey', key: () => 'sk_wrong_key_for_test' });
    const deps = h.runtime.syncContext(h.settings.sources[0]!);
    await expect(tickPayments(deps)).rejects.toBeInstanceOf(UpstreamAuthError);
    expect(h.sim.requestLog().length).toBe(1);
    expect((await h.runtime.checkpoints.get('default', 'payments')).checkpoint).toBeNull();
  });
});

describe('large windows', () => {
  const subWindows = async (harness: Harness) =>
    (
      await harness.runtime.pool.query(
        `SELECT count(*)::int AS n FROM reporting.sync_windows WHERE window_end - window_start < interval '23 hours'`,
      )
    ).rows[0].n as number;

  it('splits a window of more than 50 pages into sub-windows, each complete', async () => {
    // 1100 records over the last 24 h: whatever the time of day, one of the two local days it touches holds
    // at least 550 of them, more than 50 pages of 10 (with 700 this failed between about 07:00 and 17:00 UTC)
    h = await startHarness({ name: 'split', sim: { days: 1, perDay: 1100 }, env: { PAGE_SIZE: '10' } });
    const { payments } = await syncAll(h);
    expect(payments.windows.every((w) => w.outcome === 'complete')).toBe(true);
    expect(await subWindows(h)).toBeGreaterThan(0);
    expect(await paymentDifferences(h)).toEqual([]);
  });

  it('does not split when the service ignores the date filter (it would only multiply full reads)', async () => {
    h = await startHarness({
      name: 'nosplit',
      sim: { days: 1, perDay: 700, switches: { ignoreDateFilter: true } },
      env: { PAGE_SIZE: '10' },
    });
    const { payments } = await syncAll(h);
    expect(payments.windows.every((w) => w.outcome === 'complete')).toBe(true);
    expect(await subWindows(h)).toBeLessThanOrEqual(payments.windows.length); // at most one read each
    expect(await paymentDifferences(h)).toEqual([]);
  });
});

describe('revisits', () => {
  it('re-reads older days that still hold unsettled payments, at most every REVISIT_EVERY, until they settle', async () => {
    h = await startHarness({
      name: 'revisit',
      sim: { days: 6 },
      env: { SYNC_LOOKBACK: '1d', REVISIT_EVERY: '1h' },
    });
    await syncAll(h);
    const pending = await h.runtime.pool.query(
      `SELECT count(*)::int AS n FROM reporting.payments WHERE status IN ('INIT', 'PENDING') AND created_at < $1`,
      [new Date(h.sim.now().getTime() - 2 * 86_400_000)],
    );
    expect(pending.rows[0].n).toBeGreaterThan(0); // the simulator keeps some payments pending for days
    h.sim.advance(10 * 60_000);
    const soon = await syncAll(h);
    expect(soon.payments.revisits).toEqual([]); // read less than REVISIT_EVERY ago: not yet
    h.sim.advance(3 * 3600_000);
    const later = await syncAll(h);
    expect(later.payments.revisits.length).toBeGreaterThan(0);
    expect(later.payments.revisits.every((w) => w.outcome === 'complete')).toBe(true);
    expect(await paymentDifferences(h)).toEqual([]); // the older days' status changes landed
  });
});

describe('a bare-array window is confirmed by a second read', () => {
  /** A window over the simulator's whole history, its confirmation read counted by page requests. */
  async function readWholeHistory(harness: Harness, beforeSecondRead: () => void = () => undefined) {
    const deps = harness.runtime.syncContext(harness.settings.sources[0]!);
    const end = harness.sim.now();
    const window = { start: new Date(end.getTime() - 5 * 86_400_000), end };
    let reads = 0;
    let firstPages = 0;
    const listPayments: typeof deps.client.listPayments = (query) => {
      if (query.page === 0 && ++reads === 2) beforeSecondRead();
      if (reads === 1) firstPages += 1;
      return deps.client.listPayments(query);
    };
    const result = await runPaymentsWindow(
      { ...deps, client: { ...deps.client, listPayments } },
      window,
      'backfill',
    );
    return { result, firstPages, end };
  }

  it('counts the pages that come back byte for byte without parsing or writing them again', async () => {
    h = await startHarness({ name: 'confirm', sim: { switches: { shape: 'array' } } });
    const { result, firstPages } = await readWholeHistory(h);
    expect(result.outcome).toBe('complete');
    expect(result.reads).toBe(2);
    expect(firstPages).toBeGreaterThan(3);
    expect(result.pages).toBe(2 * firstPages);
    expect(result.reusedPages).toBe(firstPages); // the final empty page too
    expect(await paymentDifferences(h)).toEqual([]);
  });

  it('reads and writes again every page that changed between the two reads', async () => {
    h = await startHarness({ name: 'confirm-moved', sim: { switches: { shape: 'array' } } });
    const harness = h;
    // statuses move on between the reads: the pages holding those records change, the others do not
    const { result, firstPages, end } = await readWholeHistory(harness, () =>
      harness.sim.advance(6 * 3600_000),
    );
    expect(result.outcome).toBe('complete');
    expect(result.reads).toBe(2);
    expect(result.reusedPages).toBeLessThan(firstPages);
    expect(await paymentDifferences(harness, 'default', end)).toEqual([]);
  });
});

describe('Redis is fast, Postgres is durable', () => {
  it('rebuilds checkpoints from the sync log after Redis loses them, without a full re-sync', async () => {
    h = await startHarness({ name: 'flush', sim: { days: 6 }, env: { SYNC_LOOKBACK: '1d' } });
    const first = await syncAll(h);
    const checkpoint = first.payments.checkpoint;
    expect(checkpoint).not.toBeNull();
    const keys = await h.runtime.redis.keys(`${h.prefix}*`);
    await h.runtime.redis.del(...keys);
    h.sim.advance(3600_000);
    const second = await syncAll(h);
    expect(second.payments.from.getTime()).toBeGreaterThan(first.payments.from.getTime());
    expect(second.payments.checkpoint!.getTime()).toBeGreaterThanOrEqual(checkpoint!.getTime());
    expect(await paymentDifferences(h)).toEqual([]);
  });
});

describe('incomplete marks tell the truth', () => {
  it('a window marked incomplete by a tick is cleared by a later complete read covering it (a backfill)', async () => {
    // a total that lies high by 3: every window falls short, is re-read, split, and reported incomplete
    h = await startHarness({ name: 'marks', sim: { switches: { totalOffset: 3 } } });
    const deps = h.runtime.syncContext(h.settings.sources[0]!);
    const { windows } = await tickPayments(deps);
    expect(windows.every((w) => w.outcome === 'incomplete')).toBe(true);
    const marked = (await h.runtime.checkpoints.get('default', 'payments')).incompleteWindows.map(
      (w) => w.window,
    );
    expect(marked.length).toBe(windows.length);
    h.sim.setSwitches({ totalOffset: 0 });
    const covered = parseWindowKey(marked[0]!)!;
    const backfill = await runPaymentsWindow(deps, covered, 'backfill');
    expect(backfill.outcome).toBe('complete');
    const left = (await h.runtime.checkpoints.get('default', 'payments')).incompleteWindows.map(
      (w) => w.window,
    );
    expect(left).toEqual(marked.slice(1)); // that one cleared, the others still marked until read
    await tickPayments(deps);
    expect((await h.runtime.checkpoints.get('default', 'payments')).incompleteWindows).toEqual([]);
  });
});
