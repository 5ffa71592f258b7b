-- 016: status history without a row per new record.
--
-- Most records are seen once, in one status: 002's history wrote a second row (and an index entry) for
-- nearly every record loaded, about a quarter of PostgreSQL's time per page. Now:
-- - a record's first status sits on its own row: first_status, first_status_updated_at (the updatedAt
--   of the copy that showed it), first_status_source; its seen_at is the row's first_seen_at (the same
--   statement wrote both, so 002's seen_at and first_seen_at were the same now()).
-- - reporting.payment_status_changes / transfer_status_changes (002's tables, renamed) keep only the
--   statuses seen after the first, with 002's columns and key;
-- - reporting.payment_status_history / transfer_status_history are views giving exactly 002's rows: one
--   per (record, status) seen, with the updatedAt of the first copy showing it, when paysync saw it and
--   the source. Analysts' queries do not change.
-- Existing rows move losslessly: a record's history row written with the record (seen_at equal to its
-- first_seen_at) goes onto the record's row; every other history row stays in the changes table, and a
-- record with no such row keeps first_status NULL (all its history then lives in the changes table).
-- A deleted record's first status is kept in the changes table (trigger below), as 002 kept its history.
-- TRUNCATE is not tracked (as for the daily totals).

ALTER TABLE reporting.payment_status_history RENAME TO payment_status_changes;
ALTER INDEX reporting.payment_status_history_pkey RENAME TO payment_status_changes_pkey;
ALTER TABLE reporting.transfer_status_history RENAME TO transfer_status_changes;
ALTER INDEX reporting.transfer_status_history_pkey RENAME TO transfer_status_changes_pkey;
COMMENT ON TABLE reporting.payment_status_changes IS
  'Statuses a payment was seen in after its first one (that one is on reporting.payments). Read reporting.payment_status_history.';
COMMENT ON TABLE reporting.transfer_status_changes IS
  'Statuses a transfer was seen in after its first one (that one is on reporting.transfers). Read reporting.transfer_status_history.';

ALTER TABLE reporting.payments
  ADD COLUMN first_status text,
  ADD COLUMN first_status_updated_at timestamptz,
  ADD COLUMN first_status_source text;
ALTER TABLE reporting.transfers
  ADD COLUMN first_status text,
  ADD COLUMN first_status_updated_at timestamptz,
  ADD COLUMN first_status_source text;
COMMENT ON COLUMN reporting.payments.first_status IS
  'Status of the first copy paysync stored (seen at first_seen_at, with that copy''s updatedAt and source).';
COMMENT ON COLUMN reporting.transfers.first_status IS
  'Status of the first copy paysync stored (seen at first_seen_at, with that copy''s updatedAt and source).';

-- The move rewrites no grouped column: the daily-totals update triggers would add nothing, after joining
-- every row's old and new versions. They are off for these two statements only (same transaction).
ALTER TABLE reporting.payments DISABLE TRIGGER payments_daily_totals_update;
ALTER TABLE reporting.transfers DISABLE TRIGGER transfers_daily_totals_update;

WITH first AS (
  SELECT DISTINCT ON (h.payment_id) h.payment_id, h.status, h.updated_at, h.source
    FROM reporting.payment_status_changes h
    JOIN reporting.payments p ON p.id = h.payment_id AND h.seen_at = p.first_seen_at
   ORDER BY h.payment_id, h.updated_at, h.status
), moved AS (
  UPDATE reporting.payments p
     SET first_status = f.status, first_status_updated_at = f.updated_at, first_status_source = f.source
    FROM first f
   WHERE p.id = f.payment_id
  RETURNING p.id, p.first_status
)
DELETE FROM reporting.payment_status_changes h USING moved m
 WHERE h.payment_id = m.id AND h.status = m.first_status;

WITH first AS (
  SELECT DISTINCT ON (h.transfer_id) h.transfer_id, h.status, h.updated_at, h.source
    FROM reporting.transfer_status_changes h
    JOIN reporting.transfers t ON t.id = h.transfer_id AND h.seen_at = t.first_seen_at
   ORDER BY h.transfer_id, h.updated_at, h.status
), moved AS (
  UPDATE reporting.transfers t
     SET first_status = f.status, first_status_updated_at = f.updated_at, first_status_source = f.source
    FROM first f
   WHERE t.id = f.transfer_id
  RETURNING t.id, t.first_status
)
DELETE FROM reporting.transfer_status_changes h USING moved m
 WHERE h.transfer_id = m.id AND h.status = m.first_status;

ALTER TABLE reporting.payments ENABLE TRIGGER payments_daily_totals_update;
ALTER TABLE reporting.transfers ENABLE TRIGGER transfers_daily_totals_update;

-- The first status is left out when the changes table holds the same (record, status): that happens
-- only for a record deleted and loaded again, whose earlier sighting was kept (below) and stays first.
CREATE VIEW reporting.payment_status_history AS
SELECT p.id AS payment_id, p.first_status AS status, p.first_status_updated_at AS updated_at,
       p.first_seen_at AS seen_at, p.first_status_source AS source
  FROM reporting.payments p
 WHERE p.first_status IS NOT NULL
   AND NOT EXISTS (SELECT 1 FROM reporting.payment_status_changes c
                    WHERE c.payment_id = p.id AND c.status = p.first_status)
UNION ALL
SELECT c.payment_id, c.status, c.updated_at, c.seen_at, c.source
  FROM reporting.payment_status_changes c;
COMMENT ON VIEW reporting.payment_status_history IS
  'Each status a payment was seen in, once, with the updatedAt of the first copy showing it.';

CREATE VIEW reporting.transfer_status_history AS
SELECT t.id AS transfer_id, t.first_status AS status, t.first_status_updated_at AS updated_at,
       t.first_seen_at AS seen_at, t.first_status_source AS source
  FROM reporting.transfers t
 WHERE t.first_status IS NOT NULL
   AND NOT EXISTS (SELECT 1 FROM reporting.transfer_status_changes c
                    WHERE c.transfer_id = t.id AND c.status = t.first_status)
UNION ALL
SELECT c.transfer_id, c.status, c.updated_at, c.seen_at, c.source
  FROM reporting.transfer_status_changes c;
COMMENT ON VIEW reporting.transfer_status_history IS
  'Each status a transfer was seen in, once, with the updatedAt of the first copy showing it.';

-- A deleted record's first status stays in its history, as it did when every status had its own row.
CREATE FUNCTION reporting.payments_keep_first_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO reporting.payment_status_changes (payment_id, status, updated_at, seen_at, source)
  SELECT o.id, o.first_status, o.first_status_updated_at, o.first_seen_at, o.first_status_source
    FROM old_rows o WHERE o.first_status IS NOT NULL ORDER BY o.id
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;
CREATE FUNCTION reporting.transfers_keep_first_status() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO reporting.transfer_status_changes (transfer_id, status, updated_at, seen_at, source)
  SELECT o.id, o.first_status, o.first_status_updated_at, o.first_seen_at, o.first_status_source
    FROM old_rows o WHERE o.first_status IS NOT NULL ORDER BY o.id
  ON CONFLICT DO NOTHING;
  RETURN NULL;
END $$;
CREATE TRIGGER payments_keep_first_status AFTER DELETE ON reporting.payments
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION reporting.payments_keep_first_status();
CREATE TRIGGER transfers_keep_first_status AFTER DELETE ON reporting.transfers
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION reporting.transfers_keep_first_status();

-- 012's views were bound to the renamed table: the same definitions again, now reading the view.
CREATE OR REPLACE VIEW reporting.payment_statuses_observed AS
WITH seen AS (
  SELECT h.status, extract(epoch FROM (h.updated_at - p.created_at)) AS seconds
    FROM reporting.payment_status_history h
    JOIN reporting.payments p ON p.id = h.payment_id
),
now_in AS (
  SELECT status, count(*)::bigint AS n FROM reporting.payments GROUP BY status
)
SELECT s.status,
       count(*)::bigint AS payments_seen_in,
       coalesce(max(n.n), 0)::bigint AS payments_now_in,
       make_interval(secs => percentile_cont(0.5) WITHIN GROUP (ORDER BY s.seconds)) AS median_seen_after_creation,
       make_interval(secs => percentile_cont(0.9) WITHIN GROUP (ORDER BY s.seconds)) AS p90_seen_after_creation
  FROM seen s LEFT JOIN now_in n ON n.status = s.status
 GROUP BY s.status
 ORDER BY array_position(ARRAY['INIT', 'PENDING', 'COMPLETE', 'FAILED', 'TIMEOUT'], s.status), s.status;

CREATE OR REPLACE VIEW reporting.payment_status_transitions AS
WITH ordered AS (
  SELECT h.payment_id, h.status, h.updated_at,
         lag(h.status) OVER (PARTITION BY h.payment_id ORDER BY h.updated_at, h.seen_at) AS from_status,
         lag(h.updated_at) OVER (PARTITION BY h.payment_id ORDER BY h.updated_at, h.seen_at) AS from_at
    FROM reporting.payment_status_history h
)
SELECT from_status,
       status AS to_status,
       count(*)::bigint AS payments,
       make_interval(secs => percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM (updated_at - from_at)))) AS median_between
  FROM ordered
 WHERE from_status IS NOT NULL
 GROUP BY from_status, status
 ORDER BY array_position(ARRAY['INIT', 'PENDING', 'COMPLETE', 'FAILED', 'TIMEOUT'], from_status),
          array_position(ARRAY['INIT', 'PENDING', 'COMPLETE', 'FAILED', 'TIMEOUT'], status);
