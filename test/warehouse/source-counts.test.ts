/**
 * The counts a transfers tick reads (sql/017) equal the counts of the rows they stand for, whatever the
 * writes in between:
 * - reporting.payments_by_organisation equals count(*) of payments per source and organisation, and
 *   transfer_positions_held equals count(*) of transfer_positions per source, after real syncs (payments
 *   and transfers ticks), re-reads that change nothing, upserts that move a payment to another source or
 *   organisation, deletes, two loads at once on the same counts, TRUNCATE, and a rebuild;
 * - the transfers tick's answers read from them (the source's organisation, the ids held) are the ones
 *   the rows give.
 */
import { describe, expect, it } from '@jest/globals';
import type { Pool, PoolClient } from 'pg';
import { insertSyntheticDay } from '../../bench/export-fixture.js';
import { organisationOfSource, PgTransferMemory } from '../../src/warehouse/transfer-positions.js';
import { harnessFor, syncAll } from '../helpers/sync-harness.js';

const KEPT = {
  payments: `SELECT source, organization_id, records FROM reporting.payments_by_organisation WHERE records <> 0`,
  positions: `SELECT source, ids FROM reporting.transfer_positions_held WHERE ids <> 0`,
};
const COUNTED = {
  payments: `SELECT source, organization_id, count(*)::bigint FROM reporting.payments GROUP BY 1, 2`,
  positions: `SELECT source, count(*)::bigint FROM reporting.transfer_positions GROUP BY 1`,
};

/** Kept rows missing from the counted ones and the other way round, per table (all empty: equal). */
async function countsDifference(pool: Pool): Promise<Record<string, unknown[]>> {
  const diff = async (a: string, b: string) =>
    (await pool.query(`SELECT * FROM (${a}) x EXCEPT ALL SELECT * FROM (${b}) y ORDER BY 1, 2`)).rows;
  return {
    paymentsOnlyKept: await diff(KEPT.payments, COUNTED.payments),
    paymentsOnlyCounted: await diff(COUNTED.payments, KEPT.payments),
    positionsOnlyKept: await diff(KEPT.positions, COUNTED.positions),
    positionsOnlyCounted: await diff(COUNTED.positions, KEPT.positions),
  };
}

const EQUAL = {
  paymentsOnlyKept: [],
  paymentsOnlyCounted: [],
  positionsOnlyKept: [],
  positionsOnlyCounted: [],
};

async function countOf(pool: Pool, sql: string, params: unknown[] = []): Promise<number> {
  return Number((await pool.query(sql, params)).rows[0].n);
}

/** The question the kept counts answer (the source's organisation), computed from the rows themselves. */
async function organisationFromRows(pool: Pool, source: string): Promise<string | null> {
  const { rows } = await pool.query(
    `SELECT organization_id FROM reporting.payments WHERE source = $1
      GROUP BY organization_id ORDER BY count(*) DESC, organization_id LIMIT 1`,
    [source],
  );
  return rows[0]?.organization_id ?? null;
}

async function inTransaction(client: PoolClient, sql: string): Promise<void> {
  await client.query('BEGIN');
  await client.query(sql);
}

describe('per-source counts kept by triggers (sql/017)', () => {
  const harness = harnessFor({ name: 'sourcecounts', sim: { days: 3, perDay: 60 } });

  it('equal the rows after syncs, re-reads, moves and deletes, and answer what the rows answer', async () => {
    const h = harness();
    const pool = h.runtime.pool;
    const memory = new PgTransferMemory(pool);
    await syncAll(h);
    expect(await countOf(pool, 'SELECT count(*) AS n FROM reporting.payments')).toBeGreaterThan(0);
    expect(await countOf(pool, 'SELECT count(*) AS n FROM reporting.transfer_positions')).toBeGreaterThan(0);
    expect(await countsDifference(pool)).toEqual(EQUAL);
    expect(await memory.held('default')).toBe(
      await countOf(pool, "SELECT count(*) AS n FROM reporting.transfer_positions WHERE source = 'default'"),
    );
    expect(await organisationOfSource(pool, 'default')).toBe(h.org);

    // re-reads: the ticks again (unchanged rows get synced_at), and an UPDATE that changes nothing counted
    await syncAll(h);
    await pool.query('UPDATE reporting.payments SET synced_at = now()');
    await pool.query('UPDATE reporting.transfer_positions SET seen_at = now()');
    expect(await countsDifference(pool)).toEqual(EQUAL);

    // another source's history (20 organisations), then upserts that move payments to another source
    // and organisation, as the loader's ON CONFLICT does when a second source delivers them
    await insertSyntheticDay(pool, '2026-10-01', 'UTC', 3_000);
    await pool.query(`
      INSERT INTO reporting.payments (id, reference, amount, description, status, transaction_type, phone,
          service_mobile_code, extra_data, created_at, updated_at, organization_id, api_key_id, source)
      SELECT id, reference, amount, description, status, transaction_type, phone, service_mobile_code,
             extra_data, created_at, updated_at + interval '1 minute',
             CASE WHEN n % 3 = 0 THEN 'org_moved' ELSE organization_id END, api_key_id,
             CASE WHEN n % 2 = 0 THEN 'default' ELSE source END
        FROM (SELECT p.*, row_number() OVER (ORDER BY id) AS n FROM reporting.payments p
               WHERE id LIKE 'pay_20261001_%') s
      ON CONFLICT (id) DO UPDATE SET organization_id = EXCLUDED.organization_id, source = EXCLUDED.source,
          updated_at = EXCLUDED.updated_at, synced_at = now()`);
    await memory.remember(
      'other',
      Array.from({ length: 300 }, (_, i) => ({ id: `tr_other_${i}`, position: i })),
      new Date(),
    );
    await pool.query("UPDATE reporting.transfer_positions SET source = 'moved' WHERE id LIKE 'tr_other_1%'");
    expect(await countsDifference(pool)).toEqual(EQUAL);
    // 'default' now holds 1500 moved payments in 20 organisations, org_moved among them the largest
    expect(await organisationOfSource(pool, 'default')).toBe(await organisationFromRows(pool, 'default'));
    expect(await organisationOfSource(pool, 'bench')).toBe(await organisationFromRows(pool, 'bench'));

    await pool.query(
      "DELETE FROM reporting.payments WHERE id LIKE 'pay_20261001_%' AND right(id, 1) IN ('3', '7')",
    );
    await pool.query(
      "DELETE FROM reporting.payments WHERE organization_id = 'org_moved' AND source = 'default'",
    );
    expect(await memory.forgetUnseen('other', new Date())).toBe(189); // 300 less the 111 moved
    expect(await countsDifference(pool)).toEqual(EQUAL);
    expect(await memory.held('other')).toBe(0);
    expect(await memory.held('moved')).toBe(111);
    expect(await organisationOfSource(pool, 'default')).toBe(await organisationFromRows(pool, 'default'));
    expect(await organisationOfSource(pool, 'nobody')).toBeNull();
  });

  it('stays exact when two loads change the same counts at once', async () => {
    const h = harness();
    const pool = h.runtime.pool;
    const a = await pool.connect();
    const b = await pool.connect();
    try {
      const payments = (tag: string) => `
        INSERT INTO reporting.payments (id, reference, amount, description, status, transaction_type,
            created_at, updated_at, organization_id, api_key_id, source)
        SELECT 'pay_race_${tag}_' || g, 'R', 10.25, 'x', 'COMPLETE', 'PAYMENT',
               '2026-10-02T10:00:00Z'::timestamptz + g * interval '1 hour', now(),
               (ARRAY['org_a','org_b'])[1 + g % 2], 'key', 'default'
          FROM generate_series(1, 40) g`;
      const positions = (tag: string) => `
        INSERT INTO reporting.transfer_positions (source, id, position, seen_at)
        SELECT 'default', 'tr_race_${tag}_' || g, g, now() FROM generate_series(1, 40) g
        ON CONFLICT (source, id) DO UPDATE SET position = EXCLUDED.position, seen_at = EXCLUDED.seen_at`;
      await inTransaction(a, payments('a'));
      await a.query(positions('a'));
      await b.query('BEGIN');
      const second = b.query(payments('b')); // waits on a's count rows
      await a.query('COMMIT');
      await second;
      await b.query(positions('b'));
      await b.query(positions('a')); // the same ids again: updated, not counted twice
      await b.query('COMMIT');
    } finally {
      a.release();
      b.release();
    }
    expect(await countsDifference(pool)).toEqual(EQUAL);
  });

  it('are emptied by TRUNCATE and recomputed by the rebuild', async () => {
    const h = harness();
    const pool = h.runtime.pool;
    const client = await pool.connect();
    try {
      // a TRUNCATE then new rows in the same transaction: the counts are those of the new rows
      await inTransaction(client, 'TRUNCATE reporting.transfer_positions');
      await client.query(
        `INSERT INTO reporting.transfer_positions (source, id, position, seen_at)
         SELECT 'default', 'tr_after_' || g, g, now() FROM generate_series(1, 7) g`,
      );
      await client.query('COMMIT');
    } finally {
      client.release();
    }
    expect(await new PgTransferMemory(pool).held('default')).toBe(7);
    expect(await countsDifference(pool)).toEqual(EQUAL);

    await pool.query('TRUNCATE reporting.payments CASCADE');
    expect(await countsDifference(pool)).toEqual(EQUAL);
    expect(await organisationOfSource(pool, 'default')).toBeNull();

    // counts gone wrong (say, restored from a dump without their rows) come back from the rows
    await insertSyntheticDay(pool, '2026-10-04', 'UTC', 200);
    await pool.query('UPDATE reporting.payments_by_organisation SET records = records + 5');
    await pool.query('DELETE FROM reporting.transfer_positions_held');
    await pool.query('SELECT reporting.rebuild_source_counts()');
    expect(await countsDifference(pool)).toEqual(EQUAL);
    expect(await countOf(pool, 'SELECT sum(records) AS n FROM reporting.payments_by_organisation')).toBe(200);
  });
});
