/**
 * sql/016 keeps a record's first status on its own row and only later statuses in a changes table;
 * analysts read reporting.payment_status_history / transfer_status_history, views over both. These tests
 * hold the views to the rows the history tables of the 015 schema hold: the same sequence of pages (first
 * loads, re-reads, status changes, copies arriving out of order, a final status going back, records
 * deleted and loaded again) goes through the page statement of the 015 schema on a database migrated up
 * to 015 (test/helpers/baseline-page-sql.ts), and through the loader on a fully migrated database (and
 * through each of its two statements alone, since it picks one per page). The views must give the 015
 * tables' rows, the counts the same outcomes; migrating the 015 database must leave its history exactly
 * as it was.
 */
import { copyFile, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import pg from 'pg';
import { baselinePageSql } from '../helpers/baseline-page-sql.js';
import type { Payment, Transfer } from '../../src/upstream/schemas.js';
import type { PageLoad } from '../../src/sync/ports.js';
import { loadPage, pageParams, preparePage } from '../../src/warehouse/loader.js';
import { newRecordsPageSql, pageSql } from '../../src/warehouse/page-sql.js';
import { migrate } from '../../src/warehouse/migrate.js';
import { defaultSqlDir } from '../../src/warehouse/migration-files.js';
import { tableFor } from '../../src/warehouse/stream-tables.js';
import { createTestDatabase, dropDatabase, uniqueName, urlFor, type TestDatabase } from '../helpers/db.js';
import { at, makePayment, makeTransfer } from '../helpers/records.js';

let current: TestDatabase;
/** Each of the loader's two statements alone (loadPage picks one per page). */
let probing: TestDatabase;
let upserting: TestDatabase;
let beforeName: string;
let before: pg.Pool;

/** A database migrated up to 015: every status a history row, the first one included. */
async function migratedTo015(name: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'paysync-sql-015-'));
  try {
    for (const f of await readdir(defaultSqlDir()))
      if (/^\d{3}_.*\.sql$/.test(f) && Number(f.slice(0, 3)) <= 15)
        await copyFile(join(defaultSqlDir(), f), join(dir, f));
    const url = urlFor(name);
    await migrate(url, { sqlDir: dir });
    return url;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

beforeAll(async () => {
  current = await createTestDatabase('status_history');
  probing = await createTestDatabase('status_history_probe');
  upserting = await createTestDatabase('status_history_upsert');
  beforeName = uniqueName('status_history_015');
  before = new pg.Pool({ connectionString: await migratedTo015(beforeName), max: 2 });
});
afterAll(async () => {
  await before.end();
  await dropDatabase(beforeName);
  await current.drop();
  await probing.drop();
  await upserting.drop();
});

type Step = { load: PageLoad } | { deletePayments: string[] } | { deleteTransfers: string[] };

const basePayments = new Map<string, Payment>();
const baseTransfers = new Map<string, Transfer>();

/** The same record each time (same reference, amount…), in the given status and updatedAt. */
function pay(key: string, status: string, minutes: number, extra: Partial<Payment> = {}): Payment {
  const base = basePayments.get(key) ?? makePayment();
  basePayments.set(key, base);
  return { ...base, status: status as Payment['status'], updatedAt: at(minutes), ...extra };
}
function transfer(key: string, status: string, minutes: number): Transfer {
  const base = baseTransfers.get(key) ?? makeTransfer();
  baseTransfers.set(key, base);
  return { ...base, status, updatedAt: at(minutes) };
}

const payments = (source: string, records: Payment[]): Step => ({
  load: { source, stream: 'payments', organizationId: 'org_1', records, rejects: [] },
});
const transfers = (source: string, records: Transfer[]): Step => ({
  load: { source, stream: 'transfers', organizationId: 'org_1', records, rejects: [] },
});

function steps(): Step[] {
  const first = [
    pay('a', 'INIT', 1),
    pay('b', 'PENDING', 1),
    pay('c', 'COMPLETE', 1),
    pay('d', 'COMPLETE', 3),
    pay('e', 'COMPLETE', 1),
    pay('f', 'PENDING', 1),
  ];
  return [
    payments('src_a', first),
    payments('src_a', first), // a re-read: nothing new
    // Transitions, seen by another source; c unchanged; g new.
    payments('src_b', [
      pay('a', 'PENDING', 2),
      pay('b', 'COMPLETE', 2),
      pay('c', 'COMPLETE', 1),
      pay('g', 'FAILED', 1),
    ]),
    // Out of order: older copies. a's and b's statuses were seen; d's PENDING never was (it still counts).
    payments('src_a', [pay('a', 'INIT', 1), pay('b', 'PENDING', 1), pay('d', 'PENDING', 2)]),
    // A final status going back, and a later one.
    payments('src_a', [pay('e', 'PENDING', 2), pay('a', 'COMPLETE', 4)]),
    // Back to a status already seen; same updatedAt with different content (no status change).
    payments('src_a', [pay('e', 'COMPLETE', 3), pay('c', 'COMPLETE', 1, { description: 'changed' })]),
    { deletePayments: [pay('f', 'PENDING', 1).id, pay('g', 'FAILED', 1).id] },
    // Loaded again after the deletion: f in a new status, g in the status it had; h new.
    payments('src_b', [pay('f', 'COMPLETE', 5), pay('g', 'FAILED', 1), pay('h', 'INIT', 1)]),
    payments('src_b', [pay('f', 'PENDING', 6), pay('h', 'INIT', 1)]),
    transfers('src_a', [
      transfer('t1', 'PENDING', 1),
      transfer('t2', 'COMPLETE', 2),
      transfer('t3', 'PENDING', 1),
    ]),
    transfers('src_a', [
      transfer('t1', 'COMPLETE', 2),
      transfer('t2', 'PENDING', 1),
      transfer('t3', 'PENDING', 1),
    ]),
    { deleteTransfers: [transfer('t3', 'PENDING', 1).id] },
    transfers('src_b', [transfer('t3', 'FAILED', 3), transfer('t1', 'PENDING', 1)]),
  ];
}

interface Counts {
  inserted: number;
  updated: number;
  unchanged: number;
  stale: number;
  anomalies: number;
}

async function runBefore(step: Step): Promise<Counts | null> {
  if ('deletePayments' in step) {
    await before.query('DELETE FROM reporting.payments WHERE id = ANY($1)', [step.deletePayments]);
    return null;
  }
  if ('deleteTransfers' in step) {
    await before.query('DELETE FROM reporting.transfers WHERE id = ANY($1)', [step.deleteTransfers]);
    return null;
  }
  const sql = baselinePageSql(tableFor(step.load.stream));
  const { rows } = await before.query(sql, pageParams(step.load, preparePage(step.load)));
  const r = rows[0] as Counts & { anomalies: unknown[] };
  return {
    inserted: r.inserted,
    updated: r.updated,
    unchanged: r.unchanged,
    stale: r.stale,
    anomalies: r.anomalies.length,
  };
}

async function runCurrent(step: Step, db = current, statement?: typeof pageSql): Promise<Counts | null> {
  if ('deletePayments' in step) {
    await db.pool.query('DELETE FROM reporting.payments WHERE id = ANY($1)', [step.deletePayments]);
    return null;
  }
  if ('deleteTransfers' in step) {
    await db.pool.query('DELETE FROM reporting.transfers WHERE id = ANY($1)', [step.deleteTransfers]);
    return null;
  }
  if (statement) {
    const sql = statement(tableFor(step.load.stream));
    const { rows } = await db.pool.query(sql, pageParams(step.load, preparePage(step.load)));
    const o = rows[0] as Counts & { anomalies: unknown[] };
    return {
      inserted: o.inserted,
      updated: o.updated,
      unchanged: o.unchanged,
      stale: o.stale,
      anomalies: o.anomalies.length,
    };
  }
  const r = await loadPage(db.pool, step.load);
  return {
    inserted: r.inserted,
    updated: r.updated,
    unchanged: r.unchanged,
    stale: r.stale,
    anomalies: r.anomalies,
  };
}

/** The history as analysts read it; `seen_at` as the rank of the load that first saw the status. */
const HISTORY = `
  SELECT 'payments' AS stream, payment_id AS id, status, updated_at::text, source, seen_at::text AS seen_at,
         dense_rank() OVER (ORDER BY seen_at)::int AS load
    FROM reporting.payment_status_history
  UNION ALL
  SELECT 'transfers', transfer_id, status, updated_at::text, source, seen_at::text,
         dense_rank() OVER (ORDER BY seen_at)::int
    FROM reporting.transfer_status_history
  ORDER BY 1, 2, 3`;

type HistoryRow = {
  stream: string;
  id: string;
  status: string;
  updated_at: string;
  source: string;
  seen_at: string;
  load: number;
};
const withoutSeenAt = (rows: HistoryRow[]) => rows.map(({ seen_at: _, ...rest }) => rest);

describe('status history after sql/016', () => {
  it('gives the rows the history tables held, and the same counts, through re-reads, transitions, out-of-order copies and deletions', async () => {
    for (const step of steps()) {
      const then = await runBefore(step);
      expect(await runCurrent(step)).toEqual(then);
      expect(await runCurrent(step, probing, pageSql)).toEqual(then);
      expect(await runCurrent(step, upserting, newRecordsPageSql)).toEqual(then);
    }
    const old = (await before.query<HistoryRow>(HISTORY)).rows;
    const view = (await current.pool.query<HistoryRow>(HISTORY)).rows;
    expect(old).toHaveLength(20); // 14 statuses of 8 payments, 6 of 3 transfers
    expect(withoutSeenAt(view)).toEqual(withoutSeenAt(old));
    for (const db of [probing, upserting])
      expect(withoutSeenAt((await db.pool.query<HistoryRow>(HISTORY)).rows)).toEqual(withoutSeenAt(old));
    // The daily totals kept by 014's triggers still equal a grouping of the records, whichever statement ran.
    for (const db of [current, probing, upserting]) {
      const client = await db.pool.connect();
      try {
        await client.query("SET TIME ZONE 'UTC'");
        const kept = await client.query(
          `SELECT stream, day::text, status, transaction_type, service_mobile_code, records::int, amount::text
             FROM reporting.daily_totals_by_zone WHERE zone = 'UTC' AND records <> 0 ORDER BY 1, 2, 3, 4, 5`,
        );
        const grouped = await client.query(
          `SELECT stream, day::text, status, transaction_type, service_mobile_code, records::int, amount::text
             FROM reporting.daily_totals_from_records() ORDER BY 1, 2, 3, 4, 5`,
        );
        expect(kept.rows.length).toBeGreaterThan(3);
        expect(kept.rows).toEqual(grouped.rows);
      } finally {
        await client.query('RESET TIME ZONE');
        client.release();
      }
    }
    // d's PENDING, seen only on an older copy, is there; e went back to PENDING and it is there once.
    const statuses = (id: string) => view.filter((r) => r.id === id).map((r) => r.status);
    expect(statuses(pay('d', 'COMPLETE', 3).id)).toEqual(['COMPLETE', 'PENDING']);
    expect(statuses(pay('e', 'COMPLETE', 3).id)).toEqual(['COMPLETE', 'PENDING']);
    // Most records' history lives on their own row: the changes table holds the later statuses only.
    const changes = await current.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM reporting.payment_status_changes',
    );
    const firsts = await current.pool.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM reporting.payments WHERE first_status IS NOT NULL',
    );
    expect(changes.rows[0]?.n).toBeLessThan(view.filter((r) => r.stream === 'payments').length);
    expect(firsts.rows[0]?.n).toBe(8);
  });

  it('016 moves a 015 history onto the records without changing a row of it, seen_at included', async () => {
    await before.query(
      // A history row whose record is gone, and one written apart from its record's first load.
      `INSERT INTO reporting.payment_status_history (payment_id, status, updated_at, seen_at, source)
       VALUES ('pay_gone', 'PENDING', now() - interval '2 days', now() - interval '1 day', 'src_a');
       UPDATE reporting.payment_status_history SET seen_at = seen_at - interval '1 hour'
        WHERE payment_id = '${pay('h', 'INIT', 1).id}'`,
    );
    const old = (await before.query<HistoryRow>(HISTORY)).rows;
    const { rows: migrations } = await before.query<{ name: string }>(
      'SELECT name FROM public.paysync_migrations',
    );
    expect(migrations.map((m) => m.name)).not.toContain('016_first_status_on_row.sql');
    await migrate(urlFor(beforeName));
    const migrated = (await before.query<HistoryRow>(HISTORY)).rows;
    expect(migrated).toEqual(old);
    // Moved, not copied: the records loaded normally hold their first status on their row.
    const { rows } = await before.query<{ on_row: number; kept: number }>(
      `SELECT (SELECT count(*) FROM reporting.payments WHERE first_status IS NOT NULL)::int AS on_row,
              (SELECT count(*) FROM reporting.payment_status_changes)::int AS kept`,
    );
    // Not moved: h's row (written apart from it) and g's (seen before g was deleted and loaded again).
    expect(rows[0]?.on_row).toBe(6);
    expect((rows[0]?.kept ?? 0) + (rows[0]?.on_row ?? 0)).toBe(
      old.filter((r) => r.stream === 'payments').length,
    );
    // And loading goes on from there as on a database created at 016.
    const next = payments('src_a', [pay('h', 'PENDING', 7), pay('b', 'FAILED', 8)]);
    await runCurrent(next);
    await loadPage(before, (next as { load: PageLoad }).load);
    const comparable = (rows: HistoryRow[]) => withoutSeenAt(rows).map(({ load: _, ...r }) => r);
    expect(
      comparable((await before.query<HistoryRow>(HISTORY)).rows).filter((r) => r.id !== 'pay_gone'),
    ).toEqual(comparable((await current.pool.query<HistoryRow>(HISTORY)).rows));
  });
});
