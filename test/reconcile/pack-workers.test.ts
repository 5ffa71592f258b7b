/**
 * The pack's queries run without PostgreSQL's parallel workers, even on a database whose settings would
 * plan them: each reads one day, and workers would take cores from the export's own main thread and from
 * the sync (pack-derive.ts, NO_PARALLEL_WORKERS_SQL). The connection's own settings are back once the
 * pack's transaction ends.
 */
import { describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { PoolClient } from 'pg';
import { insertSyntheticDay } from '../../bench/export-fixture.js';
import { dayCoverage } from '../../src/reconcile/coverage.js';
import { derivePack } from '../../src/reconcile/pack-derive.js';
import { digestLinesSql } from '../../src/reconcile/records-digest.js';
import { dayWindow } from '../../src/sync/windows.js';
import { harnessFor } from '../helpers/sync-harness.js';

const ZONE = 'UTC';
const DAY = '2026-10-01'; // before the simulator's days: only the synthetic records

/** Settings under which PostgreSQL plans workers for any scan, as a tuned or large server may. */
const EAGER_WORKERS = [
  'SET parallel_setup_cost = 0',
  'SET parallel_tuple_cost = 0',
  'SET min_parallel_table_scan_size = 0',
  'SET min_parallel_index_scan_size = 0',
  'SET max_parallel_workers_per_gather = 2',
];

async function digestPlan(client: PoolClient, range: [Date, Date]): Promise<string> {
  const { rows } = await client.query(`EXPLAIN ${digestLinesSql('reporting.payments')}`, range);
  return rows.map((r: Record<string, string>) => r['QUERY PLAN']).join('\n');
}

describe("the pack's queries", () => {
  const harness = harnessFor({
    name: 'packworkers',
    sim: { days: 2, perDay: 20 },
    env: { REPORT_TIMEZONE: ZONE },
  });

  it('run without parallel workers where the database would start them', async () => {
    const h = harness();
    await insertSyntheticDay(h.runtime.pool, DAY, ZONE, 20_000);
    await h.runtime.pool.query('ANALYZE reporting.payments');
    const w = dayWindow(DAY, ZONE);
    const range: [Date, Date] = [w.start, w.end];
    const sources = h.settings.sources.map((s) => s.name);
    const coverage = await dayCoverage(h.runtime.pool, sources, w, h.settings.SETTLE_LAG);
    const dir = await mkdtemp(join(tmpdir(), 'paysync-packworkers-'));
    const client = await h.runtime.pool.connect();
    try {
      for (const sql of EAGER_WORKERS) await client.query(sql);
      expect(await digestPlan(client, range)).toMatch(/Gather/); // the premise: workers are planned here
      await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
      let inside = '';
      const job = { day: DAY, range, now: new Date(), coverage, horizonMs: h.settings.SETTLE_HORIZON };
      const derived = await derivePack(h.runtime, client, job, dir, async () => {
        inside = await digestPlan(client, range);
      });
      derived.workbook.abort();
      await client.query('ROLLBACK');
      expect(derived.files.payments.rows).toBe(20_000);
      expect(inside).not.toMatch(/Gather/);
      expect(await digestPlan(client, range)).toMatch(/Gather/); // the connection's own settings again
    } finally {
      await client.query('RESET ALL');
      client.release();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
