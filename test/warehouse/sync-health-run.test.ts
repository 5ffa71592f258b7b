/**
 * reporting.sync_health reads the contiguous run of complete windows from reporting.sync_runs, kept by
 * triggers (sql/017), instead of computing it from the whole sync log on each query. Its run columns
 * equal 012's definition computed from the log, whatever the writes: real ticks, windows before the run
 * (an older backfill), after a gap, filling the gap, re-runs that complete later or fail, deletes, two
 * loads at once (either commit order), TRUNCATE and a rebuild.
 */
import { describe, expect, it } from '@jest/globals';
import type { Pool, PoolClient } from 'pg';
import { harnessFor, syncAll } from '../helpers/sync-harness.js';

/** 012's run, from the log: per source and stream with a complete window. */
const RUN_FROM_LOG = `
  WITH w AS (
    SELECT source, stream, window_start AS s, least(window_end, fetched_at) AS e
      FROM reporting.sync_windows WHERE outcome = 'complete'
  ),
  reach AS (
    SELECT source, stream, s, e,
           max(e) OVER (PARTITION BY source, stream ORDER BY s, e
                        ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reached
      FROM w
  ),
  first_gap AS (
    SELECT DISTINCT ON (source, stream) source, stream, reached AS gap_from, s AS gap_to
      FROM reach WHERE reached IS NOT NULL AND s > reached ORDER BY source, stream, s
  )
  SELECT w.source, w.stream, min(w.s) AS complete_from, coalesce(g.gap_from, max(w.e)) AS complete_until,
         g.gap_from AS first_gap_from, g.gap_to AS first_gap_to
    FROM w LEFT JOIN first_gap g USING (source, stream)
   GROUP BY w.source, w.stream, g.gap_from, g.gap_to`;

const RUN_FROM_VIEW = `
  SELECT source, stream, complete_from, complete_until, first_gap_from, first_gap_to
    FROM reporting.sync_health WHERE complete_from IS NOT NULL`;

async function runDifference(pool: Pool): Promise<{ onlyView: unknown[]; onlyLog: unknown[] }> {
  const diff = async (a: string, b: string) =>
    (await pool.query(`SELECT * FROM (${a}) x EXCEPT ALL SELECT * FROM (${b}) y ORDER BY 1, 2`)).rows;
  return {
    onlyView: await diff(RUN_FROM_VIEW, RUN_FROM_LOG),
    onlyLog: await diff(RUN_FROM_LOG, RUN_FROM_VIEW),
  };
}

const EQUAL = { onlyView: [], onlyLog: [] };

/**
 * Upserts windows of `stream` as the loader does (one row per window, the latest run's outcome): each
 * [startHour, endHour) in hours after 2026-09-01, fetched a minute after it ends.
 */
function upsert(
  db: Pool | PoolClient,
  stream: string,
  windows: Array<[number, number, 'complete' | 'incomplete']>,
  fetchedLateBy = '1 minute',
) {
  return db.query(
    `INSERT INTO reporting.sync_windows AS w (source, stream, window_start, window_end, kind, fetched_at,
        records, pages, outcome, first_fetched_at)
     SELECT 'default', $1, t0 + x.a * interval '1 hour', t0 + x.b * interval '1 hour', 'backfill',
            t0 + x.b * interval '1 hour' + $5::interval, 0, 1, x.o, t0 + x.b * interval '1 hour'
       FROM unnest($2::int[], $3::int[], $4::text[]) x(a, b, o), (SELECT '2026-09-01T00:00:00Z'::timestamptz AS t0) t
     ON CONFLICT (source, stream, window_start, window_end) DO UPDATE
       SET fetched_at = EXCLUDED.fetched_at, outcome = EXCLUDED.outcome, attempts = w.attempts + 1`,
    [stream, windows.map((w) => w[0]), windows.map((w) => w[1]), windows.map((w) => w[2]), fetchedLateBy],
  );
}

async function runOf(pool: Pool, stream: string) {
  const { rows } = await pool.query(
    `SELECT complete_from, complete_until, first_gap_from, first_gap_to FROM reporting.sync_health
      WHERE source = 'default' AND stream = $1`,
    [stream],
  );
  return rows[0];
}

const at = (hours: number) => new Date(Date.parse('2026-09-01T00:00:00Z') + hours * 3_600_000);

describe('sync_health from the kept run (sql/017)', () => {
  const harness = harnessFor({ name: 'synchealthrun', sim: { days: 3, perDay: 60 } });

  it('equals 012 computed from the log after ticks and every kind of window write', async () => {
    const h = harness();
    const pool = h.runtime.pool;
    await syncAll(h);
    expect((await pool.query(RUN_FROM_VIEW)).rows.length).toBeGreaterThan(0);
    expect(await runDifference(pool)).toEqual(EQUAL);

    // a stream of its own: hours 10-20, then a gap, then 30-40
    await upsert(pool, 'drill', [
      [10, 12, 'complete'],
      [12, 20, 'complete'],
      [30, 35, 'complete'],
      [35, 40, 'complete'],
    ]);
    expect(await runOf(pool, 'drill')).toEqual({
      complete_from: at(10),
      complete_until: at(20),
      first_gap_from: at(20),
      first_gap_to: at(30),
    });
    expect(await runDifference(pool)).toEqual(EQUAL);

    await upsert(pool, 'drill', [[20, 25, 'incomplete']]); // an incomplete one does not close the gap
    await upsert(pool, 'drill', [[2, 5, 'complete']]); // older, not touching: a new run before a gap
    expect(await runOf(pool, 'drill')).toMatchObject({ complete_from: at(2), complete_until: at(5) });
    expect(await runDifference(pool)).toEqual(EQUAL);

    await upsert(pool, 'drill', [
      [5, 10, 'complete'], // joins the old run
      [20, 25, 'complete'], // the failed window re-run complete: the gap is not closed yet (25 < 30)
    ]);
    expect(await runOf(pool, 'drill')).toMatchObject({ complete_until: at(25), first_gap_to: at(30) });
    expect(await runDifference(pool)).toEqual(EQUAL);

    await upsert(pool, 'drill', [[24, 31, 'complete']]); // fills the gap: the run reaches 40
    expect(await runOf(pool, 'drill')).toEqual({
      complete_from: at(2),
      complete_until: at(40),
      first_gap_from: null,
      first_gap_to: null,
    });
    expect(await runDifference(pool)).toEqual(EQUAL);

    await upsert(pool, 'drill', [[35, 40, 'complete']], '2 hours'); // a later re-run: no change
    await upsert(pool, 'drill', [[12, 20, 'incomplete']]); // a re-run that failed: the run stops at 12
    expect(await runOf(pool, 'drill')).toMatchObject({ complete_until: at(12), first_gap_to: at(20) });
    expect(await runDifference(pool)).toEqual(EQUAL);

    await pool.query(
      `DELETE FROM reporting.sync_windows WHERE stream = 'drill' AND window_start = '2026-09-01T02:00:00Z'`,
    );
    expect(await runOf(pool, 'drill')).toMatchObject({ complete_from: at(5) });
    // a window fetched before it ended counts up to its fetch time only
    await upsert(pool, 'drill', [[12, 20, 'complete']], '-3 hours');
    expect(await runOf(pool, 'drill')).toMatchObject({ complete_until: at(17), first_gap_to: at(20) });
    expect(await runDifference(pool)).toEqual(EQUAL);
  });

  it('stays exact when two loads add windows at once, whichever comes first', async () => {
    const h = harness();
    const pool = h.runtime.pool;
    const beyondGap: Array<[number, number, 'complete']> = [[20, 30, 'complete']];
    const fillsGap: Array<[number, number, 'complete']> = [[10, 20, 'complete']];
    for (const [stream, first, second] of [
      ['race1', beyondGap, fillsGap],
      ['race2', fillsGap, beyondGap],
    ] as const) {
      await upsert(pool, stream, [[0, 10, 'complete']]);
      const a = await pool.connect();
      const b = await pool.connect();
      try {
        await a.query('BEGIN');
        await b.query('BEGIN');
        await upsert(a, stream, [...first]);
        const later = upsert(b, stream, [...second]); // waits on a's run row
        await a.query('COMMIT');
        await later;
        await b.query('COMMIT');
      } finally {
        a.release();
        b.release();
      }
      expect(await runOf(pool, stream)).toMatchObject({ complete_until: at(30), first_gap_to: null });
    }
    expect(await runDifference(pool)).toEqual(EQUAL);
  });

  it('is emptied by TRUNCATE and recomputed by the rebuild', async () => {
    const h = harness();
    const pool = h.runtime.pool;
    await pool.query('TRUNCATE reporting.sync_windows');
    expect(
      (await pool.query('SELECT * FROM reporting.sync_runs WHERE complete_from IS NOT NULL')).rows,
    ).toEqual([]);
    await upsert(pool, 'drill', [
      [0, 5, 'complete'],
      [6, 9, 'complete'],
    ]);
    expect(await runDifference(pool)).toEqual(EQUAL);
    await pool.query(`UPDATE reporting.sync_runs SET complete_until = complete_until + interval '1 day'`);
    await pool.query('SELECT reporting.rebuild_sync_runs()');
    expect(await runDifference(pool)).toEqual(EQUAL);
    expect(await runOf(pool, 'drill')).toMatchObject({ complete_until: at(5), first_gap_to: at(6) });
  });
});
