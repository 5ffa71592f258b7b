import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { validatePayments, type Payment } from '../../src/upstream/schemas.js';
import type { PageLoad, SyncWindowRow } from '../../src/sync/ports.js';
import { loadPage, recordWindow } from '../../src/warehouse/loader.js';
import { completedWindows, nonFinalDays } from '../../src/warehouse/sync-log.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makePayment } from '../helpers/records.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('rejects');
});
afterAll(async () => {
  await db.drop();
});

const page = (records: Payment[], extra: Partial<PageLoad> = {}): PageLoad => ({
  source: 'default',
  stream: 'payments',
  organizationId: 'org_1',
  records,
  rejects: [],
  ...extra,
});

const window = (overrides: Partial<SyncWindowRow> = {}): SyncWindowRow => ({
  source: 'default',
  stream: 'payments',
  windowStart: new Date('2024-03-10T00:00:00Z'),
  windowEnd: new Date('2024-03-11T00:00:00Z'),
  kind: 'live',
  fetchedAt: new Date('2024-03-11T00:10:00Z'),
  records: 1,
  rejects: 0,
  reportedTotal: 1,
  pages: 1,
  outcome: 'complete',
  ...overrides,
});

async function rejects(recordId: string) {
  const { rows } = await db.pool.query(
    `SELECT reason, raw, raw_text, times_seen, resolved_at FROM reporting.sync_rejects WHERE record_id = $1`,
    [recordId],
  );
  return rows;
}

describe('rejected records', () => {
  it('land with their reason in the page that brought them, once however often they come back', async () => {
    const bad = { ...makePayment({ id: 'pay_bad_1' }), amount: 'lots', status: 'LOST' };
    const { valid, rejects: found } = validatePayments([bad, { ...makePayment(), amount: 1500.5 }]);
    for (let i = 0; i < 2; i++) {
      expect(await loadPage(db.pool, page(valid, { rejects: found }))).toMatchObject({ rejects: 1 });
    }
    const [row] = await rejects('pay_bad_1');
    expect(row.reason).toMatch(/amount/);
    expect(row.reason).toMatch(/status/);
    expect(row.raw).toMatchObject({ id: 'pay_bad_1', status: 'LOST' });
    expect(row.times_seen).toBe(2);
    expect(row.resolved_at).toBeNull();
  });

  it('are resolved when a valid copy of the same id arrives later', async () => {
    const good = makePayment({ id: 'pay_bad_2' });
    await loadPage(
      db.pool,
      page([], { rejects: [{ raw: { id: 'pay_bad_2' }, reason: 'x', id: 'pay_bad_2' }] }),
    );
    await loadPage(db.pool, page([good]));
    expect((await rejects('pay_bad_2'))[0].resolved_at).toBeInstanceOf(Date);
    const open = await db.pool.query("SELECT 1 FROM reporting.open_rejects WHERE record_id = 'pay_bad_2'");
    expect(open.rowCount).toBe(0);
  });

  it('are open again when listed again after they were resolved: first seen kept, every listing counted', async () => {
    const bad = {
      raw: { id: 'pay_bad_3', amount: 'lots' },
      reason: 'amount is not a number',
      id: 'pay_bad_3',
    };
    const row = async () =>
      (
        await db.pool.query<{ first_seen_at: Date; last_seen_at: Date; times_seen: number; open: boolean }>(
          `SELECT first_seen_at, last_seen_at, times_seen, resolved_at IS NULL AS open
             FROM reporting.sync_rejects WHERE record_id = 'pay_bad_3'`,
        )
      ).rows;
    const openCount = async () =>
      (await db.pool.query("SELECT 1 FROM reporting.open_rejects WHERE record_id = 'pay_bad_3'")).rowCount;
    await loadPage(db.pool, page([], { rejects: [bad] }));
    const [first] = await row();
    await loadPage(db.pool, page([makePayment({ id: 'pay_bad_3' })])); // its valid copy lands
    expect(await row()).toMatchObject([{ open: false, times_seen: 1 }]);
    expect(await openCount()).toBe(0);

    await loadPage(db.pool, page([], { rejects: [bad] })); // the service sends the bad copy again
    const [again] = await row();
    expect(again).toMatchObject({ open: true, times_seen: 2, first_seen_at: first!.first_seen_at });
    expect(again!.last_seen_at.getTime()).toBeGreaterThan(first!.last_seen_at.getTime());
    expect(await openCount()).toBe(1);
    const health = await db.pool.query<{ open_rejects: string }>(
      `SELECT open_rejects::text FROM reporting.sync_health WHERE source = 'default' AND stream = 'payments'`,
    );
    const open = await db.pool.query<{ n: string }>(
      `SELECT count(*)::text AS n FROM reporting.sync_rejects
        WHERE source = 'default' AND stream = 'payments' AND resolved_at IS NULL`,
    );
    expect(health.rows).toEqual([{ open_rejects: open.rows[0]!.n }]);
  });

  it('keep what is not JSON, or not storable as JSONB, as text', async () => {
    const text = { raw: 'not json {', reason: 'not an object', id: null };
    const nul = { raw: { id: 'pay_nul', note: 'a\u0000b' }, reason: 'bad', id: 'pay_nul' };
    const big = { raw: BigInt(1), reason: 'bigint', id: null };
    await loadPage(db.pool, page([], { rejects: [text, nul, big] }));
    const { rows } = await db.pool.query(
      "SELECT raw, raw_text FROM reporting.sync_rejects WHERE reason IN ('not an object', 'bad', 'bigint') ORDER BY reason",
    );
    expect(rows).toEqual([
      { raw: null, raw_text: '{"id":"pay_nul","note":"a\\u0000b"}' },
      { raw: 1, raw_text: null },
      { raw: 'not json {', raw_text: null },
    ]);
  });

  it('include valid records PostgreSQL cannot store exactly, without failing the page', async () => {
    const nul = makePayment({ description: 'a\u0000b' });
    const lone = makePayment({ extra_data: { k: 'x\uD800' } });
    const fine = makePayment();
    expect(await loadPage(db.pool, page([nul, lone, fine]))).toMatchObject({ inserted: 1, rejects: 2 });
    expect((await rejects(nul.id))[0].reason).toMatch(/NUL/);
    expect((await rejects(lone.id))[0].reason).toMatch(/surrogate/);
  });
});

describe('the sync log', () => {
  it('writes the window with its last page, atomically: a failing page writes nothing', async () => {
    const p = makePayment();
    const broken = window({ windowEnd: new Date('2024-03-09T00:00:00Z') }); // violates end > start
    await expect(loadPage(db.pool, page([p], { window: broken }))).rejects.toThrow(/sync_windows_ordered/);
    const none = await db.pool.query('SELECT 1 FROM reporting.payments WHERE id = $1', [p.id]);
    expect(none.rowCount).toBe(0);
    await loadPage(db.pool, page([p], { window: window() }));
    expect(await completedWindows(db.pool, 'default', 'payments')).toEqual([
      {
        windowStart: new Date('2024-03-10T00:00:00Z'),
        windowEnd: new Date('2024-03-11T00:00:00Z'),
        fetchedAt: new Date('2024-03-11T00:10:00Z'),
        outcome: 'complete',
        kind: 'live',
      },
    ]);
  });

  it('keeps one row per window, counting attempts, and lists only complete windows', async () => {
    const w = window({
      source: 'other',
      windowStart: new Date('2024-03-12T00:00:00Z'),
      windowEnd: new Date('2024-03-13T00:00:00Z'),
    });
    await recordWindow(db.pool, { ...w, outcome: 'failed', detail: '503 twice' });
    expect(await completedWindows(db.pool, 'other', 'payments')).toEqual([]);
    await recordWindow(db.pool, { ...w, fetchedAt: new Date('2024-03-13T01:00:00Z') });
    const { rows } = await db.pool.query(
      "SELECT attempts, outcome, detail, first_fetched_at FROM reporting.sync_windows WHERE source = 'other'",
    );
    expect(rows).toEqual([{ attempts: 2, outcome: 'complete', detail: null, first_fetched_at: w.fetchedAt }]);
    expect(await completedWindows(db.pool, 'other', 'payments', new Date('2024-03-13T00:00:00Z'))).toEqual(
      [],
    );
    const health = await db.pool.query(
      "SELECT last_outcome, open_rejects FROM reporting.sync_health WHERE source = 'other'",
    );
    expect(health.rows).toEqual([{ last_outcome: 'complete', open_rejects: 0 }]);
  });

  it('finds the local days that still hold non-final payments, within the horizon', async () => {
    const open = (createdAt: string, status: Payment['status'] = 'PENDING') =>
      makePayment({ createdAt, updatedAt: createdAt, status });
    await loadPage(
      db.pool,
      page(
        [
          open('2024-04-01T23:30:00Z'), // 2 April in Africa/Nairobi (UTC+3)
          open('2024-04-03T10:00:00Z', 'INIT'),
          open('2024-04-04T10:00:00Z', 'COMPLETE'),
          open('2024-03-01T10:00:00Z'), // before the horizon
          open('2024-04-09T10:00:00Z'), // newer than olderThan: the live lookback's
        ],
        { source: 'revisit' },
      ),
    );
    const days = await nonFinalDays(
      db.pool,
      'revisit',
      'payments',
      'Africa/Nairobi',
      new Date('2024-04-08T00:00:00Z'),
      new Date('2024-03-20T00:00:00Z'),
    );
    expect(days).toEqual(['2024-04-02', '2024-04-03']);
  });
});
