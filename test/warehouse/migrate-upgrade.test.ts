/**
 * A database that predates sql/views (migrated with the numbered migrations written before it, holding
 * records and an analyst's own views built on ours) upgrades without loss: every row kept, our views
 * replaced in place by their files' definitions (the same as a new database gets), the analyst's views
 * still there and answering as before.
 */
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pg from 'pg';
import { migrate } from '../../src/warehouse/migrate.js';
import { defaultSqlDir, readMigrations } from '../../src/warehouse/migration-files.js';
import { readViews } from '../../src/warehouse/view-files.js';
import { createTestDatabase, dropDatabase, uniqueName, urlFor, type TestDatabase } from '../helpers/db.js';

/** The last numbered migration written before sql/views: the oldest schema that has all of our views. */
const BEFORE_VIEW_FILES = 17;
/** Views over tables a later migration made (sql/021's field_sightings): the old schema has none to compare. */
const LATER_VIEWS = ['unknown_fields_seen'];

const RECORDS = `
  INSERT INTO reporting.payments (id, reference, amount, description, status, transaction_type, phone,
    service_mobile_code, created_at, updated_at, organization_id, api_key_id, source,
    first_status, first_status_updated_at, first_status_source)
  VALUES ('p1', 'r1', 1500.50, 'one', 'COMPLETE', 'PAYMENT', '22961000001', 'MTN', '2024-05-01T10:00:00Z',
          '2024-05-01T10:09:00Z', 'org', 'key', 'src', 'PENDING', '2024-05-01T10:02:00Z', 'src'),
         ('p2', 'r2', 0.05, 'two', 'PENDING', 'RECHARGE', NULL, 'MOOV', '2024-05-01T23:30:00Z',
          '2024-05-01T23:31:00Z', 'org', 'key', 'src', 'PENDING', '2024-05-01T23:31:00Z', 'src'),
         ('p3', 'r3', 250000000, 'three', 'FAILED', 'PAYMENT', NULL, 'MTN', '2024-05-02T08:00:00Z',
          '2024-05-02T08:20:00Z', 'org', 'key', 'src', 'FAILED', '2024-05-02T08:20:00Z', 'src');
  INSERT INTO reporting.payment_status_changes (payment_id, status, updated_at, seen_at, source)
  VALUES ('p1', 'COMPLETE', '2024-05-01T10:09:00Z', '2024-05-01T11:00:00Z', 'src');
  INSERT INTO reporting.transfers (id, reference, amount, name, phone, service_mobile_code, status,
    created_at, updated_at, source, organization_id, first_status, first_status_updated_at, first_status_source)
  VALUES ('t1', 'tr1', 7, 'Ama', '22961000002', 'MTN', 'COMPLETE', '2024-05-01T12:00:00Z',
          '2024-05-01T12:05:00Z', 'src', 'org', 'COMPLETE', '2024-05-01T12:05:00Z', 'src');
  INSERT INTO reporting.sync_windows (source, stream, window_start, window_end, kind, fetched_at, records,
    pages, outcome, first_fetched_at)
  VALUES ('src', 'payments', '2024-05-01T00:00:00Z', '2024-05-02T00:00:00Z', 'backfill', '2024-05-02T01:00:00Z',
          2, 1, 'complete', '2024-05-02T01:00:00Z'),
         ('src', 'payments', '2024-05-02T00:00:00Z', '2024-05-03T00:00:00Z', 'backfill', '2024-05-03T01:00:00Z',
          0, 1, 'failed', '2024-05-03T01:00:00Z');
  INSERT INTO reporting.sync_rejects (source, stream, record_id, raw, raw_hash, reason)
  VALUES ('src', 'payments', 'bad1', '{"id": "bad1", "amount": "x"}', 'h1', 'amount: not a number');
  INSERT INTO reporting.export_snapshot_days (day, stream, ids, statuses, amounts, updated_ats)
  VALUES ('2024-05-01', 'payments', ARRAY['p1', 'p2'], ARRAY['COMPLETE', 'PENDING'], ARRAY[1500.50, 0.05],
          ARRAY['2024-05-01T10:09:00Z', '2024-05-01T23:31:00Z']::timestamptz[])`;

/** Analysts' own views, built on two of ours (one of them the view whose columns the upgrade extends). */
const ANALYST_VIEWS = `
  CREATE SCHEMA analyst;
  CREATE VIEW analyst.status_times AS
    SELECT status, payments_seen_in, median_seen_after_creation FROM reporting.payment_statuses_observed;
  CREATE VIEW analyst.daily_money AS
    SELECT day, sum(amount) AS amount FROM reporting.daily_totals GROUP BY day`;

type Columns = Record<string, string[]>;
type Contents = Record<string, unknown>;

/** The relations of `schema` of one kind, by name, with their columns. */
async function columnsOf(
  client: pg.ClientBase,
  schema: string,
  kind: 'BASE TABLE' | 'VIEW',
): Promise<Columns> {
  const { rows } = await client.query<{ name: string; columns: string[] }>(
    `SELECT c.table_name AS name, array_agg(quote_ident(c.column_name) ORDER BY c.ordinal_position) AS columns
       FROM information_schema.columns c
       JOIN information_schema.tables t USING (table_schema, table_name)
      WHERE c.table_schema = $1 AND t.table_type = $2
        AND c.column_name <> 'lag' -- sync_health's lag is now() - complete_until: it moves by itself
      GROUP BY 1`,
    [schema, kind],
  );
  return Object.fromEntries(rows.map((r) => [r.name, r.columns]));
}

/** Each relation's rows over the given columns, in a stable order (later migrations may add columns). */
async function contents(client: pg.ClientBase, schema: string, columns: Columns): Promise<Contents> {
  const out: Contents = {};
  for (const [name, list] of Object.entries(columns)) {
    const relation = `${client.escapeIdentifier(schema)}.${client.escapeIdentifier(name)}`;
    const data = await client.query<{ rows: unknown }>(
      `SELECT coalesce(jsonb_agg(to_jsonb(x) ORDER BY x::text), '[]') AS rows
         FROM (SELECT ${list.join(', ')} FROM ${relation}) x`,
    );
    out[name] = data.rows[0]?.rows;
  }
  return out;
}

/** Our views' and their function's definitions as PostgreSQL holds them. */
async function definitions(client: pg.ClientBase): Promise<Record<string, string>> {
  const { rows } = await client.query<{ name: string; definition: string }>(
    `SELECT c.relname AS name, pg_get_viewdef(c.oid) AS definition
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'reporting' AND c.relkind = 'v'
     UNION ALL
     SELECT p.proname, pg_get_functiondef(p.oid)
       FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = 'reporting' AND p.proname = 'daily_totals_from_records'`,
  );
  return Object.fromEntries(rows.map((r) => [r.name, r.definition]));
}

describe('a database migrated before sql/views existed', () => {
  const name = uniqueName('views_upgrade');
  let client: pg.Client;
  let fresh: TestDatabase;
  const columns: Record<'tables' | 'views' | 'analyst', Columns> = { tables: {}, views: {}, analyst: {} };
  let before: Record<'tables' | 'views' | 'analyst', Contents>;
  let result: Awaited<ReturnType<typeof migrate>>;

  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'paysync-sql-'));
    try {
      const old = (await readMigrations(defaultSqlDir())).filter((f) => f.number <= BEFORE_VIEW_FILES);
      for (const f of old) await cp(join(defaultSqlDir(), f.name), join(dir, f.name));
      expect(await migrate(urlFor(name), { sqlDir: dir })).toMatchObject({ views: [] });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    client = new pg.Client({ connectionString: urlFor(name) });
    await client.connect();
    await client.query(RECORDS);
    await client.query(ANALYST_VIEWS);
    columns.tables = await columnsOf(client, 'reporting', 'BASE TABLE');
    columns.views = await columnsOf(client, 'reporting', 'VIEW');
    columns.analyst = await columnsOf(client, 'analyst', 'VIEW');
    before = {
      tables: await contents(client, 'reporting', columns.tables),
      views: await contents(client, 'reporting', columns.views),
      analyst: await contents(client, 'analyst', columns.analyst),
    };
    result = await migrate(urlFor(name));
    fresh = await createTestDatabase('views_fresh');
  });
  afterAll(async () => {
    await client?.end();
    await fresh?.drop();
    await dropDatabase(name);
  });

  it('applies the later migrations, then every view file in dependency order', async () => {
    const later = (await readMigrations(defaultSqlDir())).filter((f) => f.number > BEFORE_VIEW_FILES);
    const views = await readViews(defaultSqlDir());
    expect(result).toEqual({
      applied: later.map((f) => f.name),
      alreadyApplied: BEFORE_VIEW_FILES,
      views: views.map((v) => v.name),
    });
    const { rows } = await client.query('SELECT name, checksum FROM public.paysync_views ORDER BY name');
    expect(rows).toEqual(
      views.map((v) => ({ name: v.name, checksum: v.checksum })).sort((a, b) => (a.name < b.name ? -1 : 1)),
    );
  });

  it('keeps every row, and the views answer as before on the columns they had', async () => {
    expect(await contents(client, 'reporting', columns.tables)).toEqual(before.tables);
    expect(await contents(client, 'reporting', columns.views)).toEqual(before.views);
    // every view holds rows, so "as before" compares something
    const views = (await readViews(defaultSqlDir()))
      .map((v) => v.view)
      .filter((v) => !LATER_VIEWS.includes(v))
      .sort();
    expect(Object.keys(before.views).sort()).toEqual(views);
    for (const view of views)
      expect([view, (before.views[view] as unknown[]).length > 0]).toEqual([view, true]);
  });

  it("keeps the analyst's views built on ours, answering as before", async () => {
    expect(await contents(client, 'analyst', columns.analyst)).toEqual(before.analyst);
    expect(Object.keys(before.analyst).sort()).toEqual(['daily_money', 'status_times']);
  });

  it('holds exactly the definitions a new database gets from sql/views', async () => {
    const freshClient = await fresh.pool.connect();
    try {
      const expected = await definitions(freshClient);
      expect(await definitions(client)).toEqual(expected);
    } finally {
      freshClient.release();
    }
    const { rows } = await client.query(
      `SELECT status, extract(epoch FROM median_update_after_creation)::int AS median_s,
              median_update_after_creation = median_seen_after_creation AS alias_equal
         FROM reporting.payment_statuses_observed`,
    );
    // updatedAt - createdAt of the first copy in each status: p1 and p2 PENDING 2 and 1 minutes, p1
    // COMPLETE 9, p3 FAILED 20; when paysync saw them (seen_at: an hour later, or the test's now) plays no part
    expect(rows).toEqual([
      { status: 'PENDING', median_s: 90, alias_equal: true },
      { status: 'COMPLETE', median_s: 540, alias_equal: true },
      { status: 'FAILED', median_s: 1200, alias_equal: true },
    ]);
  });
});
