-- reporting.daily_totals: per stream (payments, transfers), day, status, transaction type and operator
-- (service_mobile_code), how many records and their exact amount sum (NUMERIC, never rounded). Transfers
-- have no transaction type: theirs reads 'TRANSFER'.
--
-- A "day" is a day in your session's time zone: run SET TIME ZONE 'Africa/Porto-Novo' (your
-- REPORT_TIMEZONE) first. Views take no parameters; the session's zone is the standard way to give one.
-- For a zone listed in reporting.daily_totals_zones (UTC and the server's default zone, plus any added with
-- SELECT reporting.add_daily_totals_zone('Africa/Porto-Novo')) the rows come from
-- reporting.daily_totals_by_zone, kept up to date by triggers as records load (sql/014_history_scale.sql),
-- so a week's totals read a few index entries however long the history; for any other zone they are
-- grouped from the records by reporting.daily_totals_from_records() below. The rows are the same either way.
--
-- This file is the view's one definition: edit it here and `paysync migrate` applies it (CREATE OR
-- REPLACE: analysts' own views built on this one stay). Columns may only be added at the end; renaming,
-- retyping or removing one needs a numbered migration first (the rule: src/warehouse/apply-views.ts).
-- The function below exists only for this view, so its definition lives here too (same rule for its
-- signature and result columns).

-- The grouping of the records, for sessions in a zone that is not kept. plpgsql on purpose: the planner
-- cannot inline it, so when the zone is kept the view's plan holds no scan of the records to cost (a costed
-- 20M-row scan switched JIT compilation on: seconds spent compiling a branch never run).
CREATE OR REPLACE FUNCTION reporting.daily_totals_from_records()
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

COMMENT ON VIEW reporting.daily_totals IS
  'Count and exact amount per stream, day (session time zone), status, transaction type, operator.';
