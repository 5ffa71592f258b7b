/**
 * A service that misbehaves within its interface never stalls a day in silence (principle 8), on real
 * HTTP with the simulator, PostgreSQL and Redis:
 * - records listed twice, `total` counting every copy: complete on the evidence of two agreeing reads,
 *   the copies recorded on the window's row; reconcile counts the copies the same way, keeps them apart
 *   from quarantined records, and flags a copy standing in place of a record never listed;
 * - copies of one payment or transfer that contradict each other on different pages: the newer
 *   `updatedAt` wins, a tie is quarantined, both versions stay in `sync_rejects` while the service lists
 *   them, and are open again (status, rejects.csv) when it lists them again after they cleared; a
 *   transfers day with them reconciles clean and is exported final;
 * - a `total` no list can have: judged as no total, noted on the row, never a failed write;
 * - a record time far in the future or before 2000: quarantined and read again, so the true state lands
 *   when the service sends it; a row an older paysync froze with one is healed by `reconcile --heal`;
 * - paging that does not converge (pages past the end, cycles, trickles) ends within a few pages of the
 *   evidence, complete when every record of `total` arrived, else with its reason code.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { reconcileAndHeal } from '../../src/reconcile/heal.js';
import { exportDay } from '../../src/reconcile/export-day.js';
import { reconcileDay } from '../../src/reconcile/reconcile.js';
import { formatTable } from '../../src/reconcile/reconcile-table.js';
import { EPOCH, FAR_FUTURE, FAR_PAST } from '../../src/sim/switches.js';
import { runBackfillItem } from '../../src/sync/run-work.js';
import { tickPayments, tickTransfers } from '../../src/sync/tick.js';
import { runTransfers } from '../../src/sync/transfers-run.js';
import { dayWindow, localDayOf } from '../../src/sync/windows.js';
import { csvObjects, tempExportDir } from '../helpers/export.js';
import { paymentDifferences, startHarness, type Harness } from '../helpers/sync-harness.js';
import { harnessStatus } from '../helpers/ops.js';

let h: Harness | null = null;
let exportDir: string | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
  if (exportDir) await rm(exportDir, { recursive: true, force: true });
  exportDir = null;
});

interface WindowRow {
  window_start: Date;
  outcome: string;
  reason_code: string | null;
  duplicates: number;
  anomalies: string[];
  reported_total: string | null;
  detail: string | null;
}

async function windowRows(hh: Harness): Promise<WindowRow[]> {
  const { rows } = await hh.runtime.pool.query<WindowRow>(
    `SELECT window_start, outcome, reason_code, duplicates, anomalies, reported_total::text, detail
       FROM reporting.sync_windows WHERE stream = 'payments' ORDER BY window_start`,
  );
  return rows;
}

const deps = (hh: Harness) => hh.runtime.syncContext(hh.settings.sources[0]!);

/** One backfill item of the payments of `day` (UTC), run in this process. */
function backfillDay(hh: Harness, day: string) {
  const w = dayWindow(day, 'UTC');
  return runBackfillItem(deps(hh), {
    stream: 'payments',
    source: 'default',
    start: w.start.getTime(),
    end: w.end.getTime(),
    kind: 'backfill',
  });
}

describe('records listed more than once', () => {
  it('a list naming records twice (total counting copies) is complete on two agreeing reads; the copies are on the row', async () => {
    h = await startHarness({
      name: 'anomalies-dupes',
      sim: { days: 2, perDay: 60, switches: { shape: 'wrapper', duplicateRate: 0.1, duplicateOffset: 30 } },
    });
    const copies = h.sim.copies(h.org, 'payments').length;
    expect(copies).toBeGreaterThan(3);
    const report = await tickPayments(deps(h));
    expect(report.windows.map((w) => [w.outcome, w.reasonCode])).toEqual(
      report.windows.map(() => ['complete', null]),
    );
    const rows = await windowRows(h);
    expect(rows.reduce((n, r) => n + r.duplicates, 0)).toBe(copies);
    const doubled = rows.filter((r) => r.duplicates > 0);
    expect(doubled.length).toBeGreaterThan(0);
    for (const r of doubled) expect(r.anomalies).toEqual(['DUPLICATES_LISTED']);
    expect(await paymentDifferences(h)).toEqual([]);

    // a backfill of a day with copies succeeds (it used to fail every attempt: 42 of 43)
    const day = localDayOf(new Date(h.sim.now().getTime() - 86_400_000), 'UTC');
    const item = await backfillDay(h, day);
    expect(item.records).toBeGreaterThan(0);

    // transfers listed twice: the scan is complete on two agreeing reads, its copies on its row (one
    // transfer named by id, so the list holds a copy whatever the day's few transfers drew)
    const listed = h.sim.transfers(h.org);
    expect(listed.length).toBeGreaterThan(0);
    h.sim.setSwitches({ duplicateIds: [listed[0]!.id] });
    const transfers = await tickTransfers(deps(h));
    expect(transfers?.outcome).toBe('complete');
    const scan = await h.runtime.pool.query<{ duplicates: number; anomalies: string[] }>(
      `SELECT duplicates, anomalies FROM reporting.sync_windows WHERE stream = 'transfers'`,
    );
    expect(scan.rows).toEqual([
      { duplicates: h.sim.copies(h.org, 'transfers').length, anomalies: ['DUPLICATES_LISTED'] },
    ]);
    expect(h.sim.copies(h.org, 'transfers').length).toBeGreaterThan(0);

    // reconcile counts the copies the same way: the service's counts by status (which count every
    // listing) differ from the warehouse, the day's list confirms the copies, and nothing is flagged
    const result = await reconcileDay(h.runtime, day);
    expect(result.mismatches).toBe(0);
    const payments = result.rows.filter((r) => r.stream === 'payments');
    expect(payments.some((r) => r.method === 'paged-confirm')).toBe(true);
    expect(result.differences).toEqual([]);
  });

  it('reconcile keeps quarantined records apart from copies: malformed records and confirmed copies, no alarm', async () => {
    h = await startHarness({
      name: 'anomalies-dupes-malformed',
      sim: {
        now: new Date('2024-06-15T12:00:00.000Z'),
        days: 2,
        perDay: 80,
        malformed: 2, // a missing field, an amount as text: quarantined, in a documented status
        switches: { shape: 'wrapper', duplicateRate: 0.1, duplicateOffset: 30 },
      },
    });
    const day = '2024-06-14';
    await backfillDay(h, day);
    expect((await tickTransfers(deps(h)))?.outcome).toBe('complete');
    const rows = await windowRows(h);
    expect(rows.every((r) => r.outcome === 'complete')).toBe(true);
    expect(rows.reduce((n, r) => n + r.duplicates, 0)).toBeGreaterThan(0);
    const result = await reconcileDay(h.runtime, day);
    const payments = result.rows.filter((r) => r.stream === 'payments');
    expect(payments.reduce((n, r) => n + r.quarantined, 0)).toBeGreaterThan(0); // malformed ones
    expect(payments.some((r) => r.method === 'paged-confirm')).toBe(true); // counts by status were checked
    expect(result.rows.filter((r) => r.unexplained !== 0)).toEqual([]);
    expect(result.mismatches).toBe(0);
  });

  it('reconcile flags a copy standing in place of a record never listed, which one list cannot tell apart', async () => {
    const NOON = new Date('2024-06-15T12:00:00.000Z');
    h = await startHarness({
      name: 'anomalies-dupes-in-place',
      sim: { now: NOON, days: 2, perDay: 60, switches: { shape: 'wrapper' } },
    });
    // two payments of yesterday, listed one after the other, final, in different statuses: the first is
    // listed twice, its copy where the second would be (the service's counts by status stay true)
    const day = '2024-06-14';
    const all = h.sim.payments(h.org);
    const final = (p: (typeof all)[number]) => p.status === 'COMPLETE' || p.status === 'FAILED';
    const at = all.findIndex(
      (p, i) =>
        i > 5 &&
        localDayOf(new Date(p.createdAt), 'UTC') === day &&
        all[i + 1] !== undefined &&
        localDayOf(new Date(all[i + 1]!.createdAt), 'UTC') === day &&
        final(p) &&
        final(all[i + 1]!) &&
        p.status !== all[i + 1]!.status,
    );
    const [copied, missing] = [all[at]!, all[at + 1]!];
    h.sim.setSwitches({ duplicateIds: [copied.id], duplicateInPlace: true, duplicateOffset: 1 });
    expect(h.sim.copies(h.org, 'payments').map((c) => c.displaced?.id)).toEqual([missing.id]);

    // sync cannot tell it within the list: two agreeing reads, complete, the copy on the row
    const item = await backfillDay(h, day);
    expect(item.records).toBeGreaterThan(0);
    const rows = await windowRows(h);
    expect(rows.map((r) => [r.outcome, r.duplicates, r.anomalies])).toEqual([
      ['complete', 1, ['DUPLICATES_LISTED']],
    ]);
    const held = await h.runtime.pool.query(`SELECT id FROM reporting.payments WHERE id = $1`, [missing.id]);
    expect(held.rows).toEqual([]);
    expect((await tickTransfers(deps(h)))?.outcome).toBe('complete'); // the day's other stream, clean

    // reconcile can: each status's count, its copies counted as the window recorded them, is set
    // against the warehouse, and both statuses disagree
    const result = await reconcileDay(h.runtime, day);
    const flagged = result.rows.filter((r) => r.stream === 'payments' && r.unexplained !== 0);
    expect(flagged.map((r) => [r.status, r.unexplained]).sort()).toEqual(
      [
        [copied.status, -1],
        [missing.status, 1],
      ].sort(),
    );
    expect(result.mismatches).toBe(2);
    const why = result.differences.filter((d) => d.stream === 'payments');
    expect(why.map((d) => [d.kind, d.id])).toEqual(
      expect.arrayContaining([
        ['missing_in_warehouse', null],
        ['missing_at_source', null],
      ]),
    );
    for (const d of why) expect(d.reason).toMatch(/copies of records it lists twice.*\(confirmed by sync/);
    // the table reconcile prints says why under the rows
    expect(formatTable(day, result.rows, { differences: result.differences })).toMatch(
      /default\/payments \(no id\): missing in warehouse \(service: \S+ \?\): the service counts .* a copy may stand in place of a record never listed/,
    );
    // the record that stands in place of the missing one is named for the service's owners
    expect(why.find((d) => d.kind === 'missing_at_source')?.reason).toContain(`listed twice: ${copied.id}`);

    // --heal reads the day again (the service still lists the copy in place: still flagged) and flags
    // no row for a count without a record, while a row the service lists is cleared of an old flag
    await h.runtime.pool.query(
      `UPDATE reporting.payments SET missing_at_source_since = now() WHERE id = $1`,
      [copied.id],
    );
    const healed = await reconcileAndHeal(h.runtime, day, { attempts: 1, backoffMs: 0 });
    expect(healed.result.mismatches).toBe(2);
    const flags = await h.runtime.pool.query(
      `SELECT count(*)::int AS n FROM reporting.payments WHERE missing_at_source_since IS NOT NULL`,
    );
    expect(flags.rows).toEqual([{ n: 0 }]);
  });

  it('copies the reads do not agree on are not evidence: DUPLICATES_UNCONFIRMED after re-reads', async () => {
    h = await startHarness({
      name: 'anomalies-dupes-moving',
      sim: { days: 1, perDay: 40, switches: { shape: 'wrapper' } },
      env: { PAGE_SIZE: '10' },
    });
    const ids = h.sim.payments(h.org).map((p) => p.id);
    // every read lists a different record twice: no two reads agree on the copies
    let read = 0;
    const client = deps(h).client;
    const tick = tickPayments({
      ...deps(h),
      client: {
        ...client,
        initializePayment: (body) => client.initializePayment(body),
        listTransfers: (q) => client.listTransfers(q),
        listPayments: (q) => {
          if (q.page === 0) h!.sim.setSwitches({ duplicateIds: [ids[read++ % ids.length]!] });
          return client.listPayments(q);
        },
      },
    });
    const report = await tick;
    const short = report.windows.filter((w) => w.outcome !== 'complete');
    expect(short.length).toBeGreaterThan(0);
    for (const w of short) expect(w.reasonCode).toBe('DUPLICATES_UNCONFIRMED');
    const rows = (await windowRows(h)).filter((r) => r.outcome !== 'complete');
    expect(rows.map((r) => r.reason_code)).toContain('DUPLICATES_UNCONFIRMED');
  });
});

describe('contradicting copies on different pages', () => {
  /** A fixed service clock: the same records every run, whatever the hour the test runs at. */
  const NOON = new Date('2024-06-15T12:00:00.000Z');
  interface RejectRow {
    reason: string;
    status: string;
    amount: string;
    open: boolean;
  }
  /**
   * After a first tick, the first payment (the list is oldest first) of the window that listed the most:
   * with PAGE_SIZE 2 and duplicateOffset 3 its copy is on the next page.
   */
  const firstOfBusiest = async (hh: Harness) => {
    await tickPayments(deps(hh));
    const { rows } = await hh.runtime.pool.query<{ id: string }>(
      `SELECT p.id FROM reporting.payments p,
              (SELECT w.window_start, w.window_end FROM reporting.sync_windows w
                WHERE w.stream = 'payments'
                ORDER BY (SELECT count(*) FROM reporting.payments x
                           WHERE x.created_at >= w.window_start AND x.created_at < w.window_end) DESC
                LIMIT 1) w
        WHERE p.created_at >= w.window_start AND p.created_at < w.window_end
        ORDER BY p.created_at, p.id LIMIT 1`,
    );
    return hh.sim.payments(hh.org).find((p) => p.id === rows[0]!.id)!;
  };
  const seenOf = async (hh: Harness, id: string) =>
    (
      await hh.runtime.pool.query<{ first_seen_at: Date; last_seen_at: Date; times_seen: number }>(
        `SELECT first_seen_at, last_seen_at, times_seen FROM reporting.sync_rejects WHERE record_id = $1
          ORDER BY raw->>'updatedAt', raw->>'amount'`,
        [id],
      )
    ).rows;
  const openPaymentRejects = async (hh: Harness) =>
    Number(
      (
        await hh.runtime.pool.query<{ n: string }>(
          `SELECT count(*) AS n FROM reporting.sync_rejects WHERE stream = 'payments' AND resolved_at IS NULL`,
        )
      ).rows[0]!.n,
    );
  const rejectsOf = async (hh: Harness, id: string) =>
    (
      await hh.runtime.pool.query<RejectRow>(
        `SELECT reason, raw->>'status' AS status, raw->>'amount' AS amount, resolved_at IS NULL AS open
           FROM reporting.sync_rejects WHERE record_id = $1 ORDER BY raw->>'updatedAt', raw->>'amount'`,
        [id],
      )
    ).rows;

  it('the newer updatedAt wins; both versions stay quarantined while listed, clear once it stops, and are open again when it lists them again', async () => {
    exportDir = await tempExportDir();
    h = await startHarness({
      name: 'anomalies-contradict',
      sim: { now: NOON, days: 2, perDay: 60 },
      env: { PAGE_SIZE: '2', EXPORT_DIR: exportDir },
    });
    const victim = h.sim.payments(h.org)[1]!;
    h.sim.setSwitches({
      duplicateIds: [victim.id],
      duplicateOffset: 3, // the copy on the next page
      copyVariant: 'status',
      copyUpdatedAt: 'later',
    });
    const [pair] = h.sim.copies(h.org, 'payments');
    const copy = pair!.copy as { status: string; updatedAt: string };
    for (let i = 0; i < 2; i++) {
      const report = await tickPayments(deps(h));
      expect(report.windows.every((w) => w.outcome === 'complete')).toBe(true);
      const held = await h.runtime.pool.query(
        `SELECT status, updated_at FROM reporting.payments WHERE id = $1`,
        [victim.id],
      );
      expect(held.rows[0]).toMatchObject({ status: copy.status, updated_at: new Date(copy.updatedAt) });
      const rejects = await rejectsOf(h, victim.id);
      expect(rejects.map((r) => [r.status, r.open])).toEqual([
        [victim.status, true],
        [copy.status, true],
      ]);
      for (const r of rejects)
        expect(r.reason).toMatch(/^contradicting copies: .*status.*the newer updatedAt/);
    }
    expect((await windowRows(h)).some((r) => r.anomalies.includes('CONTRADICTING_COPIES'))).toBe(true);

    // nothing else wrong: the day reconciles (the copy sync kept stands for the id, the counts by status
    // agree once copies are counted) and is exported final
    await tickTransfers(deps(h));
    const day = localDayOf(new Date(victim.createdAt), 'UTC');
    const reconciled = await reconcileDay(h.runtime, day);
    expect(reconciled.rows.some((r) => r.stream === 'payments' && r.method === 'paged-confirm')).toBe(true);
    expect(reconciled.rows.filter((r) => r.unexplained !== 0)).toEqual([]);
    const later = new Date(h.sim.now().getTime() + h.settings.SETTLE_HORIZON + 2 * 86_400_000);
    expect((await exportDay(h.runtime, day, { now: later })).state).toBe('final');

    h.sim.setSwitches({ duplicateIds: [] }); // the service lists it once again
    await tickPayments(deps(h));
    expect((await rejectsOf(h, victim.id)).map((r) => r.open)).toEqual([false, false]);
    // an older copy never overwrites a newer one (principle 3): the newer version stays
    const kept = await h.runtime.pool.query(`SELECT status FROM reporting.payments WHERE id = $1`, [
      victim.id,
    ]);
    expect(kept.rows).toEqual([{ status: copy.status }]);

    // the service lists both copies again: the resolved versions are quarantined again, and every reader
    // of open rejects says so (the status page's count, rejects.csv, reconcile's explanation)
    const before = await seenOf(h, victim.id);
    h.sim.setSwitches({ duplicateIds: [victim.id] });
    await tickPayments(deps(h));
    expect((await rejectsOf(h, victim.id)).map((r) => r.open)).toEqual([true, true]);
    const after = await seenOf(h, victim.id);
    for (const [i, r] of after.entries()) {
      expect(r.first_seen_at).toEqual(before[i]!.first_seen_at); // the same reject, not a new one
      expect(r.times_seen).toBeGreaterThan(before[i]!.times_seen);
      expect(r.last_seen_at.getTime()).toBeGreaterThan(before[i]!.last_seen_at.getTime());
    }
    const open = await openPaymentRejects(h);
    expect(open).toBeGreaterThanOrEqual(2);
    const status = await harnessStatus(h);
    expect(status.streams.find((s) => s.stream === 'payments')?.openRejects).toBe(open);
    const again = await reconcileDay(h.runtime, day);
    expect(again.rows.filter((r) => r.unexplained !== 0)).toEqual([]);
    const pack = await exportDay(h.runtime, day, { now: later });
    const listed = csvObjects(await readFile(join(pack.dir, 'rejects.csv'), 'utf8'));
    expect(
      listed
        .filter((r) => r.id === victim.id)
        .map((r) => (JSON.parse(r.raw!) as { status: string }).status)
        .sort(),
    ).toEqual([victim.status, copy.status].sort());
  });

  it('a tie (same updatedAt, different amounts): neither copy is written, both are quarantined', async () => {
    h = await startHarness({
      name: 'anomalies-tie',
      sim: { now: NOON, days: 2, perDay: 60 },
      env: { PAGE_SIZE: '2' },
    });
    const victim = await firstOfBusiest(h);
    h.sim.setSwitches({ duplicateIds: [victim.id], duplicateOffset: 3, copyVariant: 'amount' });
    await tickPayments(deps(h));
    await tickPayments(deps(h));
    const rejects = await rejectsOf(h, victim.id);
    expect(rejects).toHaveLength(2);
    expect(new Set(rejects.map((r) => r.amount)).size).toBe(2);
    for (const r of rejects) {
      expect(r.open).toBe(true);
      expect(r.reason).toMatch(/same newest updatedAt; which copy is true cannot be known, none is kept/);
    }
  });
});

describe('contradicting transfer copies on different pages', () => {
  const NOON = new Date('2024-06-15T12:00:00.000Z');
  interface TransferReject {
    reason: string;
    status: string;
    amount: string;
    open: boolean;
  }
  const rejectsOf = async (hh: Harness, id: string) =>
    (
      await hh.runtime.pool.query<TransferReject>(
        `SELECT reason, raw->>'status' AS status, raw->>'amount' AS amount, resolved_at IS NULL AS open
           FROM reporting.sync_rejects WHERE stream = 'transfers' AND record_id = $1
          ORDER BY raw->>'updatedAt', raw->>'amount'`,
        [id],
      )
    ).rows;
  const scanRows = async (hh: Harness) =>
    (
      await hh.runtime.pool.query<{ outcome: string; duplicates: number; anomalies: string[] }>(
        `SELECT outcome, duplicates, anomalies FROM reporting.sync_windows
          WHERE stream = 'transfers' ORDER BY fetched_at`,
      )
    ).rows;
  const held = async (hh: Harness, id: string) =>
    (
      await hh.runtime.pool.query<{ status: string; amount: string; updated_at: Date }>(
        `SELECT status, amount::text AS amount, updated_at FROM reporting.transfers WHERE id = $1`,
        [id],
      )
    ).rows;

  it.each(['later', 'earlier'] as const)(
    'the newer updatedAt wins (copy %s), both versions stay quarantined while listed; the scan notes it; the day is final',
    async (clock) => {
      h = await startHarness({
        name: `anomalies-contradict-transfers-${clock}`,
        sim: { now: NOON, days: 2, perDay: 60 },
        env: { PAGE_SIZE: '2' },
      });
      const victim = h.sim.transfers(h.org)[1]!;
      h.sim.setSwitches({
        duplicateIds: [victim.id],
        duplicateOffset: 3, // the copy on the next page
        copyVariant: 'status',
        copyUpdatedAt: clock,
      });
      const [pair] = h.sim.copies(h.org, 'transfers');
      type Served = { status: string; updatedAt: string };
      const copy = pair!.copy as Served;
      expect(copy.status).not.toBe(victim.status);
      const kept: Served = clock === 'later' ? copy : victim;
      const versions = clock === 'later' ? [victim.status, copy.status] : [copy.status, victim.status];
      for (let i = 0; i < 2; i++) {
        expect((await tickTransfers(deps(h)))?.outcome).toBe('complete');
        expect(await held(h, victim.id)).toMatchObject([
          { status: kept.status, updated_at: new Date(kept.updatedAt) },
        ]);
        const rejects = await rejectsOf(h, victim.id);
        expect(rejects.map((r) => [r.status, r.open])).toEqual(versions.map((v) => [v, true]));
        for (const r of rejects)
          expect(r.reason).toMatch(/^contradicting copies: .*status.*the newer updatedAt/);
      }
      // the scan's row says it as a payments window's does: one copy confirmed, the contradiction noted
      const scans = await scanRows(h);
      expect(scans.every((r) => r.outcome === 'complete')).toBe(true);
      expect(scans[0]).toEqual({
        outcome: 'complete',
        duplicates: 1,
        anomalies: ['CONTRADICTING_COPIES', 'DUPLICATES_LISTED'],
      });

      // nothing else wrong: the day reconciles with no unexplained difference and is exported final
      await tickPayments(deps(h));
      const day = localDayOf(new Date(victim.createdAt), 'UTC');
      const reconciled = await reconcileDay(h.runtime, day);
      expect(reconciled.rows.filter((r) => r.stream === 'transfers' && r.unexplained !== 0)).toEqual([]);
      expect(reconciled.mismatches).toBe(0);
      const later = new Date(h.sim.now().getTime() + h.settings.SETTLE_HORIZON + 2 * 86_400_000);
      expect((await exportDay(h.runtime, day, { now: later })).state).toBe('final');

      // the service lists it once again: the next read of the whole list clears both versions
      h.sim.setSwitches({ duplicateIds: [] });
      await runTransfers(deps(h), { mode: 'full', stopBefore: null, organizationId: null });
      expect((await rejectsOf(h, victim.id)).map((r) => r.open)).toEqual([false, false]);
      expect(await held(h, victim.id)).toMatchObject([{ status: kept.status }]);
    },
  );

  it('a tie (same updatedAt, different amounts): neither copy is written, both are quarantined', async () => {
    h = await startHarness({
      name: 'anomalies-tie-transfers',
      sim: { now: NOON, days: 2, perDay: 60 },
      env: { PAGE_SIZE: '2' },
    });
    const victim = h.sim.transfers(h.org)[1]!;
    h.sim.setSwitches({ duplicateIds: [victim.id], duplicateOffset: 3, copyVariant: 'amount' });
    expect((await tickTransfers(deps(h)))?.outcome).toBe('complete');
    const rejects = await rejectsOf(h, victim.id);
    expect(rejects).toHaveLength(2);
    expect(new Set(rejects.map((r) => r.amount)).size).toBe(2);
    for (const r of rejects) {
      expect(r.open).toBe(true);
      expect(r.reason).toMatch(/same newest updatedAt; which copy is true cannot be known, none is kept/);
    }
    expect((await scanRows(h))[0]?.anomalies).toContain('CONTRADICTING_COPIES');
  });
});

describe('impossible values are quarantined, never frozen in', () => {
  it.each([3e9, -5, 42.5])(
    'a total of %s is judged as no total, noted, and the window completes',
    async (total) => {
      h = await startHarness({
        name: 'anomalies-total',
        sim: { days: 1, perDay: 30, switches: { shape: 'wrapper', totalOverride: total } },
        env: { PAGE_SIZE: '10' },
      });
      const report = await tickPayments(deps(h));
      expect(report.windows.every((w) => w.outcome === 'complete')).toBe(true);
      const rows = await windowRows(h);
      expect(rows.length).toBeGreaterThan(0);
      for (const r of rows) {
        expect(r.reported_total).toBeNull();
        expect(r.anomalies).toEqual(['IMPOSSIBLE_TOTAL']);
      }
      expect(await paymentDifferences(h)).toEqual([]);
    },
  );

  it('a time in year 9999 or before 2000 is quarantined, read again, and the true state lands once sent', async () => {
    h = await startHarness({ name: 'anomalies-times', sim: { days: 2, perDay: 30 } });
    const [future, past, epoch] = h.sim.payments(h.org).map((p) => p.id);
    h.sim.setSwitches({
      timestampOverrides: {
        [future!]: { updatedAt: FAR_FUTURE },
        [past!]: { createdAt: FAR_PAST },
        [epoch!]: { updatedAt: EPOCH },
      },
    });
    const first = await tickPayments(deps(h));
    expect(first.windows.every((w) => w.outcome === 'complete')).toBe(true);
    const rejects = await h.runtime.pool.query<{ record_id: string; reason: string }>(
      `SELECT record_id, reason FROM reporting.sync_rejects WHERE resolved_at IS NULL ORDER BY record_id`,
    );
    expect(rejects.rows.map((r) => r.record_id).sort()).toEqual([future, past, epoch].sort());
    for (const r of rejects.rows) expect(r.reason).toMatch(/^impossible timestamp: (createdAt|updatedAt) /);
    expect(rejects.rows.find((r) => r.record_id === future)?.reason).toMatch(/FUTURE_TOLERANCE \(1d\)/);
    const stored = await h.runtime.pool.query(`SELECT id FROM reporting.payments WHERE id = ANY($1)`, [
      [future, past, epoch],
    ]);
    expect(stored.rows).toEqual([]);
    expect((await windowRows(h)).some((r) => r.anomalies.includes('IMPOSSIBLE_TIMESTAMP'))).toBe(true);

    // the service fixes the records: the next read lands their true state and resolves the rejects
    h.sim.setSwitches({ timestampOverrides: {} });
    await tickPayments(deps(h));
    expect(await paymentDifferences(h)).toEqual([]);
    const open = await h.runtime.pool.query(`SELECT 1 FROM reporting.sync_rejects WHERE resolved_at IS NULL`);
    expect(open.rows).toEqual([]);
  });

  it('a row an older paysync stored with updatedAt 9999 is healed by reconcile --heal', async () => {
    h = await startHarness({ name: 'anomalies-heal', sim: { days: 2, perDay: 30 } });
    await tickPayments(deps(h));
    const day = localDayOf(new Date(h.sim.now().getTime() - 86_400_000), 'UTC');
    const w = dayWindow(day, 'UTC');
    const victim = h.sim
      .payments(h.org)
      .find(
        (p) => Date.parse(p.createdAt) >= w.start.getTime() && Date.parse(p.createdAt) < w.end.getTime(),
      )!;
    // what an earlier version left: the row frozen with a far-future updatedAt and a status not the service's
    await h.runtime.pool.query(
      `UPDATE reporting.payments SET updated_at = '9999-12-31T23:59:59Z', status = 'INIT' WHERE id = $1`,
      [victim.id],
    );
    await tickPayments(deps(h)); // the forward-only upsert cannot fix it
    expect((await paymentDifferences(h)).join('\n')).toMatch(victim.id);

    const steps: string[] = [];
    const report = await reconcileAndHeal(h.runtime, day, {
      onStep: (l) => steps.push(l),
      refreshPack: false,
    });
    expect(steps.join('\n')).toMatch(
      /1 row\(s\) held an impossible time; moved to the rejects, reading again/,
    );
    expect(report.result.mismatches).toBe(0);
    expect(await paymentDifferences(h)).toEqual([]);
    const reject = await h.runtime.pool.query<{ reason: string; resolved: boolean }>(
      `SELECT reason, resolved_at IS NOT NULL AS resolved FROM reporting.sync_rejects WHERE record_id = $1`,
      [victim.id],
    );
    expect(reject.rows).toEqual([{ reason: expect.stringMatching(/updatedAt 9999-12-31/), resolved: true }]);
  });
});

describe('paging that does not converge stops early', () => {
  const listRequests = (hh: Harness) =>
    hh.sim.requestLog().filter((r) => r.path.startsWith('/api/paiements')).length;

  it('pages served past the end after every record arrived: complete, PAST_TOTAL_PAGES noted, a page later', async () => {
    h = await startHarness({
      name: 'anomalies-past-end',
      sim: { days: 1, perDay: 9, switches: { shape: 'wrapper', pastEnd: 'wrap' } },
      env: { PAGE_SIZE: '1' }, // every page full: the wrapper's own evidence never ends the list
    });
    h.sim.clearRequestLog();
    const report = await tickPayments(deps(h));
    expect(report.windows.every((w) => w.outcome === 'complete')).toBe(true);
    const records = h.sim.payments(h.org).length;
    // a page per record and a page or two past the end per window (and its re-reads), never the
    // 10,000-page ceiling each window reached before
    expect(listRequests(h)).toBeLessThanOrEqual(2 * records + 3 * report.windows.length);
    const noted = (await windowRows(h)).filter((r) => r.anomalies.includes('PAST_TOTAL_PAGES'));
    expect(noted.length).toBeGreaterThan(0);
    expect(await paymentDifferences(h)).toEqual([]);
  });

  it.each([
    [
      'a cycle back to an earlier page',
      { shape: 'wrapper', pageCycle: { after: 3, back: 1 } },
      ['PAGE_CYCLE'],
    ],
    // going round may come back exactly to page 0 (then the page is ignored, as far as anyone can tell)
    [
      'bare arrays going round past the end',
      { shape: 'array', pastEnd: 'wrap' },
      ['PAGE_CYCLE', 'PAGE_IGNORED'],
    ],
    // a window holding no more records than a page (the hour before now) trickles nothing new: its second
    // page repeats records of its first, a cycle; the day's full windows trickle
    ['bare arrays trickling one record per page', { shape: 'array', trickle: 1 }, ['TRICKLE', 'PAGE_CYCLE']],
    ['a wrapper trickling one record per page', { shape: 'wrapper', trickle: 1 }, ['TRICKLE', 'PAGE_CYCLE']],
  ] as const)('%s: ends within a few pages, failed with its code', async (_label, switches, codes) => {
    h = await startHarness({
      name: 'anomalies-cycle',
      sim: { days: 1, perDay: 200, switches },
      env: { PAGE_SIZE: '10', UPSTREAM_RETRIES: '0' },
    });
    h.sim.clearRequestLog();
    const report = await tickPayments(deps(h));
    const failed = report.windows.filter((w) => w.outcome !== 'complete');
    expect(failed.length).toBeGreaterThan(0);
    for (const w of failed) expect(codes).toContain(w.reasonCode);
    if (codes[0] === 'TRICKLE') expect(failed.map((w) => w.reasonCode)).toContain('TRICKLE');
    // a handful of pages per failed window instead of the ceiling or a request per record
    expect(listRequests(h)).toBeLessThan(12 * report.windows.length);
    const rows = (await windowRows(h)).filter((r) => r.outcome !== 'complete');
    for (const r of rows) {
      expect(codes).toContain(r.reason_code);
      expect(r.detail).toMatch(r.reason_code === 'TRICKLE' ? /trickles/ : /cycles|ignores `page`/);
    }
  });
});
