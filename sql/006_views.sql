-- 006: views for analysts (each shown with an example query in the README).
--
-- A "day" in these views is a day in the session's time zone: run `SET TIME ZONE 'Africa/Abidjan'`
-- (or ALTER DATABASE ... SET timezone) first to get days in REPORT_TIMEZONE. Views cannot take
-- parameters; the session zone is the standard way to give them one.

-- Daily count and exact amount sum per stream, day, status, transaction type and operator.
-- Transfers have no transaction type: their transaction_type is 'TRANSFER'.
CREATE VIEW reporting.daily_totals AS
SELECT 'payments'::text AS stream,
       (p.created_at AT TIME ZONE current_setting('TimeZone'))::date AS day,
       p.status,
       p.transaction_type,
       p.service_mobile_code,
       count(*)::bigint AS records,
       sum(p.amount) AS amount
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
COMMENT ON VIEW reporting.daily_totals IS
  'Count and exact amount per stream, day (session time zone), status, transaction type, operator.';

-- Status funnel of payments: how many payments were ever seen in each status, what share of all
-- payments that is, and how long after creation they got there (from the status history's updatedAt).
CREATE VIEW reporting.payment_status_funnel AS
WITH reached AS (
  SELECT h.status,
         extract(epoch FROM (h.updated_at - p.created_at)) AS seconds
  FROM reporting.payment_status_history h
  JOIN reporting.payments p ON p.id = h.payment_id
)
SELECT r.status,
       count(*)::bigint AS payments,
       round(100.0 * count(*) / nullif((SELECT count(*) FROM reporting.payments), 0), 2) AS pct_of_all,
       make_interval(secs => percentile_cont(0.5) WITHIN GROUP (ORDER BY r.seconds)) AS median_time_to_reach,
       make_interval(secs => percentile_cont(0.9) WITHIN GROUP (ORDER BY r.seconds)) AS p90_time_to_reach
FROM reached r
GROUP BY r.status
ORDER BY array_position(ARRAY['INIT', 'PENDING', 'COMPLETE', 'FAILED', 'TIMEOUT'], r.status), r.status;
COMMENT ON VIEW reporting.payment_status_funnel IS
  'Payments that reached each status, share of all payments, median and p90 time from creation.';

-- Sync health per source and stream: how far complete windows reach (lag = now - that point), the
-- last run and its outcome, failures in the last day, and open rejects.
CREATE VIEW reporting.sync_health AS
WITH streams AS (
  SELECT DISTINCT source, stream FROM reporting.sync_windows
  UNION
  SELECT DISTINCT source, stream FROM reporting.sync_rejects
),
last_run AS (
  SELECT DISTINCT ON (source, stream) source, stream, fetched_at, kind, outcome, detail
  FROM reporting.sync_windows
  ORDER BY source, stream, fetched_at DESC
)
SELECT s.source,
       s.stream,
       (SELECT max(w.window_end) FROM reporting.sync_windows w
         WHERE w.source = s.source AND w.stream = s.stream AND w.outcome = 'complete') AS complete_until,
       now() - (SELECT max(w.window_end) FROM reporting.sync_windows w
         WHERE w.source = s.source AND w.stream = s.stream AND w.outcome = 'complete') AS lag,
       l.fetched_at AS last_run_at,
       l.kind AS last_run_kind,
       l.outcome AS last_outcome,
       l.detail AS last_detail,
       (SELECT count(*) FROM reporting.sync_windows w
         WHERE w.source = s.source AND w.stream = s.stream AND w.outcome <> 'complete'
           AND w.fetched_at > now() - interval '1 day')::bigint AS not_complete_last_day,
       (SELECT count(*) FROM reporting.sync_rejects r
         WHERE r.source = s.source AND r.stream = s.stream AND r.resolved_at IS NULL)::bigint AS open_rejects
FROM streams s
LEFT JOIN last_run l ON l.source = s.source AND l.stream = s.stream;
COMMENT ON VIEW reporting.sync_health IS
  'Per source and stream: complete-until, lag, last run and outcome, recent failures, open rejects.';

-- Rejects still to look at (no valid copy has arrived since), newest first.
CREATE VIEW reporting.open_rejects AS
SELECT r.reject_id,
       r.source,
       r.stream,
       r.record_id,
       r.reason,
       r.times_seen,
       r.first_seen_at,
       r.last_seen_at,
       coalesce(r.raw::text, r.raw_text) AS raw
FROM reporting.sync_rejects r
WHERE r.resolved_at IS NULL
ORDER BY r.last_seen_at DESC;
COMMENT ON VIEW reporting.open_rejects IS
  'Rejected records with no valid copy loaded since, newest first, with the reason and the raw record.';
