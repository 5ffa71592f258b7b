-- 014: what people run daily stays as fast after years of history (README "Years of history").
--
-- 1. Daily totals maintained as records load. reporting.daily_totals (006) grouped every payment ever
--    loaded on each query: a week's totals cost a scan of the whole history. Now a table holds, per time
--    zone listed in reporting.daily_totals_zones, stream, local day, status, transaction type and
--    operator, the count and the exact amount sum; statement-level triggers on payments and transfers
--    add what each INSERT/UPDATE/DELETE changes (transition tables: one grouped upsert per statement,
--    not per row; rows whose grouped columns did not change, such as a re-read that only moves
--    synced_at, add nothing). The view reads that table when the session's time zone is listed, with the
--    day indexed, and falls back to grouping the records otherwise: the same rows either way.
--    Writers of one group serialise on its row (upserts in key order, so two loads cannot deadlock on
--    them). TRUNCATE is not tracked: run SELECT reporting.rebuild_daily_totals() after one.
-- 2. reporting.sync_health is 012's view (lag from the contiguous run of complete windows); an index on
--    (source, stream, fetched_at DESC) serves its last-run lookup. The sync log grows with windows, not
--    with records, so it stays small beside the records.
-- 3. An index for reconcile's count of a source's transfers (see the end).

CREATE TABLE reporting.daily_totals_zones (
  zone text PRIMARY KEY
);
COMMENT ON TABLE reporting.daily_totals_zones IS
  'Time zones whose daily totals are maintained (add one with SELECT reporting.add_daily_totals_zone(zone)).';

CREATE TABLE reporting.daily_totals_by_zone (
  zone                text    NOT NULL,
  stream              text    NOT NULL,
  day                 date    NOT NULL,
  status              text    NOT NULL,
  transaction_type    text    NOT NULL,
  service_mobile_code text,
  records             bigint  NOT NULL,
  amount              numeric NOT NULL,
  CONSTRAINT daily_totals_by_zone_key
    UNIQUE NULLS NOT DISTINCT (zone, day, stream, status, transaction_type, service_mobile_code)
);
COMMENT ON TABLE reporting.daily_totals_by_zone IS
  'Count and exact amount per zone, local day, stream, status, type, operator; kept by triggers. Read reporting.daily_totals.';

-- jit off: a load's page is a few thousand rows at most, and compiling this plan (costed high without
-- statistics on the transition tables) took two seconds per statement, far more than running it.
-- enable_nestloop off: the cached plan guesses one row per transition table and joined old and new rows
-- in a nested loop (a million comparisons per 1000-row page: 0.5 s); a hash join on id takes a millisecond.
CREATE FUNCTION reporting.payments_daily_totals() RETURNS trigger LANGUAGE plpgsql
  SET jit = off SET enable_nestloop = off AS $$
BEGIN
  -- Each branch names only the transition tables its trigger defines (plpgsql resolves them when run).
  IF TG_OP = 'INSERT' THEN
    INSERT INTO reporting.daily_totals_by_zone AS t
    SELECT z.zone, 'payments', (n.created_at AT TIME ZONE z.zone)::date, n.status, n.transaction_type,
           n.service_mobile_code, count(*), sum(n.amount)
      FROM new_rows n CROSS JOIN reporting.daily_totals_zones z
     GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 3, 2, 4, 5, 6
    ON CONFLICT ON CONSTRAINT daily_totals_by_zone_key DO UPDATE
      SET records = t.records + EXCLUDED.records, amount = t.amount + EXCLUDED.amount;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO reporting.daily_totals_by_zone AS t
    SELECT z.zone, 'payments', (o.created_at AT TIME ZONE z.zone)::date, o.status, o.transaction_type,
           o.service_mobile_code, -count(*), -sum(o.amount)
      FROM old_rows o CROSS JOIN reporting.daily_totals_zones z
     GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 3, 2, 4, 5, 6
    ON CONFLICT ON CONSTRAINT daily_totals_by_zone_key DO UPDATE
      SET records = t.records + EXCLUDED.records, amount = t.amount + EXCLUDED.amount;
  ELSE
    -- Only rows whose grouped columns or amount changed: a re-read that moves synced_at adds nothing.
    -- Joined on id (a hash join: comparing whole rows in the join condition made it a nested loop).
    INSERT INTO reporting.daily_totals_by_zone AS t
    SELECT z.zone, 'payments', (c.created_at AT TIME ZONE z.zone)::date, c.status, c.transaction_type,
           c.service_mobile_code, sum(c.sign), sum(c.sign * c.amount)
      FROM (
        SELECT o.created_at, o.status, o.transaction_type, o.service_mobile_code, o.amount, -1 AS sign
          FROM old_rows o LEFT JOIN new_rows n ON n.id = o.id
         WHERE n.id IS NULL OR (n.created_at, n.status, n.transaction_type, n.service_mobile_code, n.amount::text) IS DISTINCT FROM (o.created_at, o.status, o.transaction_type, o.service_mobile_code, o.amount::text)
        UNION ALL
        SELECT n.created_at, n.status, n.transaction_type, n.service_mobile_code, n.amount, 1
          FROM new_rows n LEFT JOIN old_rows o ON o.id = n.id
         WHERE o.id IS NULL OR (n.created_at, n.status, n.transaction_type, n.service_mobile_code, n.amount::text) IS DISTINCT FROM (o.created_at, o.status, o.transaction_type, o.service_mobile_code, o.amount::text)
      ) c CROSS JOIN reporting.daily_totals_zones z
     GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 3, 2, 4, 5, 6
    ON CONFLICT ON CONSTRAINT daily_totals_by_zone_key DO UPDATE
      SET records = t.records + EXCLUDED.records, amount = t.amount + EXCLUDED.amount;
  END IF;
  RETURN NULL;
END $$;

-- jit off: a load's page is a few thousand rows at most, and compiling this plan (costed high without
-- statistics on the transition tables) took two seconds per statement, far more than running it.
-- enable_nestloop off: the cached plan guesses one row per transition table and joined old and new rows
-- in a nested loop (a million comparisons per 1000-row page: 0.5 s); a hash join on id takes a millisecond.
CREATE FUNCTION reporting.transfers_daily_totals() RETURNS trigger LANGUAGE plpgsql
  SET jit = off SET enable_nestloop = off AS $$
BEGIN
  -- Each branch names only the transition tables its trigger defines (plpgsql resolves them when run).
  IF TG_OP = 'INSERT' THEN
    INSERT INTO reporting.daily_totals_by_zone AS t
    SELECT z.zone, 'transfers', (n.created_at AT TIME ZONE z.zone)::date, n.status, 'TRANSFER',
           n.service_mobile_code, count(*), sum(n.amount)
      FROM new_rows n CROSS JOIN reporting.daily_totals_zones z
     GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 3, 2, 4, 5, 6
    ON CONFLICT ON CONSTRAINT daily_totals_by_zone_key DO UPDATE
      SET records = t.records + EXCLUDED.records, amount = t.amount + EXCLUDED.amount;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO reporting.daily_totals_by_zone AS t
    SELECT z.zone, 'transfers', (o.created_at AT TIME ZONE z.zone)::date, o.status, 'TRANSFER',
           o.service_mobile_code, -count(*), -sum(o.amount)
      FROM old_rows o CROSS JOIN reporting.daily_totals_zones z
     GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 3, 2, 4, 5, 6
    ON CONFLICT ON CONSTRAINT daily_totals_by_zone_key DO UPDATE
      SET records = t.records + EXCLUDED.records, amount = t.amount + EXCLUDED.amount;
  ELSE
    -- Only rows whose grouped columns or amount changed: a re-read that moves synced_at adds nothing.
    -- Joined on id (a hash join: comparing whole rows in the join condition made it a nested loop).
    INSERT INTO reporting.daily_totals_by_zone AS t
    SELECT z.zone, 'transfers', (c.created_at AT TIME ZONE z.zone)::date, c.status, 'TRANSFER',
           c.service_mobile_code, sum(c.sign), sum(c.sign * c.amount)
      FROM (
        SELECT o.created_at, o.status, o.service_mobile_code, o.amount, -1 AS sign
          FROM old_rows o LEFT JOIN new_rows n ON n.id = o.id
         WHERE n.id IS NULL OR (n.created_at, n.status, n.service_mobile_code, n.amount::text) IS DISTINCT FROM (o.created_at, o.status, o.service_mobile_code, o.amount::text)
        UNION ALL
        SELECT n.created_at, n.status, n.service_mobile_code, n.amount, 1
          FROM new_rows n LEFT JOIN old_rows o ON o.id = n.id
         WHERE o.id IS NULL OR (n.created_at, n.status, n.service_mobile_code, n.amount::text) IS DISTINCT FROM (o.created_at, o.status, o.service_mobile_code, o.amount::text)
      ) c CROSS JOIN reporting.daily_totals_zones z
     GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 3, 2, 4, 5, 6
    ON CONFLICT ON CONSTRAINT daily_totals_by_zone_key DO UPDATE
      SET records = t.records + EXCLUDED.records, amount = t.amount + EXCLUDED.amount;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER payments_daily_totals_insert AFTER INSERT ON reporting.payments
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION reporting.payments_daily_totals();
CREATE TRIGGER payments_daily_totals_update AFTER UPDATE ON reporting.payments
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION reporting.payments_daily_totals();
CREATE TRIGGER payments_daily_totals_delete AFTER DELETE ON reporting.payments
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION reporting.payments_daily_totals();
CREATE TRIGGER transfers_daily_totals_insert AFTER INSERT ON reporting.transfers
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION reporting.transfers_daily_totals();
CREATE TRIGGER transfers_daily_totals_update AFTER UPDATE ON reporting.transfers
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION reporting.transfers_daily_totals();
CREATE TRIGGER transfers_daily_totals_delete AFTER DELETE ON reporting.transfers
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION reporting.transfers_daily_totals();

-- Recomputes one zone's rows (or all zones') from the records. SHARE locks wait for loads in flight and
-- hold new ones back, so nothing is counted twice or missed.
CREATE FUNCTION reporting.rebuild_daily_totals(only_zone text DEFAULT NULL) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  LOCK TABLE reporting.payments, reporting.transfers IN SHARE MODE;
  DELETE FROM reporting.daily_totals_by_zone WHERE only_zone IS NULL OR zone = only_zone;
  INSERT INTO reporting.daily_totals_by_zone
  SELECT z.zone, 'payments', (p.created_at AT TIME ZONE z.zone)::date, p.status, p.transaction_type,
         p.service_mobile_code, count(*), sum(p.amount)
    FROM reporting.payments p CROSS JOIN reporting.daily_totals_zones z
   WHERE only_zone IS NULL OR z.zone = only_zone
   GROUP BY 1, 2, 3, 4, 5, 6;
  INSERT INTO reporting.daily_totals_by_zone
  SELECT z.zone, 'transfers', (t.created_at AT TIME ZONE z.zone)::date, t.status, 'TRANSFER',
         t.service_mobile_code, count(*), sum(t.amount)
    FROM reporting.transfers t CROSS JOIN reporting.daily_totals_zones z
   WHERE only_zone IS NULL OR z.zone = only_zone
   GROUP BY 1, 2, 3, 4, 5, 6;
END $$;

-- Starts maintaining one more zone (e.g. REPORT_TIMEZONE), computing its history once.
CREATE FUNCTION reporting.add_daily_totals_zone(new_zone text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  LOCK TABLE reporting.payments, reporting.transfers IN SHARE MODE;
  INSERT INTO reporting.daily_totals_zones (zone) VALUES (new_zone) ON CONFLICT DO NOTHING;
  PERFORM reporting.rebuild_daily_totals(new_zone);
END $$;

-- UTC, and the server's default zone (what a session gets without SET TIME ZONE).
INSERT INTO reporting.daily_totals_zones (zone)
SELECT DISTINCT z FROM (VALUES ('UTC'), (current_setting('TimeZone'))) v(z) ON CONFLICT DO NOTHING;
ANALYZE reporting.daily_totals_zones;
SELECT reporting.rebuild_daily_totals();

-- 006's grouping of the records, for sessions in a zone that is not kept. plpgsql on purpose: the
-- planner cannot inline it, so when the zone is kept the view's plan holds no scan of the records to
-- cost (a costed 20M-row scan switched JIT compilation on: seconds spent compiling a branch never run).
CREATE FUNCTION reporting.daily_totals_from_records()
RETURNS TABLE (stream text, day date, status text, transaction_type text, service_mobile_code text,
               records bigint, amount numeric)
LANGUAGE plpgsql STABLE AS $$
BEGIN
  RETURN QUERY
  SELECT 'payments'::text,
         (p.created_at AT TIME ZONE current_setting('TimeZone'))::date,
         p.status,
         p.transaction_type,
         p.service_mobile_code,
         count(*)::bigint,
         sum(p.amount)
  FROM reporting.payments p
  GROUP BY 2, 3, 4, 5
  UNION ALL
  SELECT 'transfers'::text,
         (t.created_at AT TIME ZONE current_setting('TimeZone'))::date,
         t.status,
         'TRANSFER'::text,
         t.service_mobile_code,
         count(*)::bigint,
         sum(t.amount)
  FROM reporting.transfers t
  GROUP BY 2, 3, 5;
END $$;

CREATE OR REPLACE VIEW reporting.daily_totals AS
SELECT a.stream, a.day, a.status, a.transaction_type, a.service_mobile_code, a.records, a.amount
FROM reporting.daily_totals_by_zone a
WHERE a.zone = current_setting('TimeZone') AND a.records <> 0
UNION ALL
SELECT r.stream, r.day, r.status, r.transaction_type, r.service_mobile_code, r.records, r.amount
FROM reporting.daily_totals_from_records() r
WHERE NOT EXISTS (SELECT 1 FROM reporting.daily_totals_zones z WHERE z.zone = current_setting('TimeZone'));

-- 2. sync_health from indexes.
CREATE INDEX sync_windows_last_run_idx ON reporting.sync_windows (source, stream, fetched_at DESC);

-- The view itself is 012's (lag from the contiguous run of complete windows, never negative); this index
-- serves its last-run lookup.

-- 3. reconcile counts every transfer a source stored (transfers have no date filter at the service, so
--    the whole list is compared): an index on source turns that heap scan (0.6 s at 1M transfers) into
--    an index-only count.
CREATE INDEX transfers_source_idx ON reporting.transfers (source);
