-- reporting.payment_statuses_observed: per payment status, how many payments paysync observed in it at
-- least once (payments_seen_in), how many are in it now (payments_now_in), and how long after creation
-- payments got there by the service's own clocks: median_update_after_creation and
-- p90_update_after_creation are the median and 90th percentile, over those payments, of updatedAt minus
-- createdAt on the first copy paysync stored in that status (payment_status_history.updated_at: the best
-- estimate of when the payment entered it). They say nothing of paysync's delay: when paysync saw each copy
-- is payment_status_history.seen_at.
-- Not a funnel: the service shows only a record's current status, and paysync sees a payment only when it
-- reads it, so a status held between two reads is never observed (payments_seen_in undercounts it).
--
-- median_seen_after_creation and p90_seen_after_creation are the same figures under their former names,
-- kept as aliases so that queries and views written with them keep working; they measure nothing about
-- when paysync saw a record, whatever the name says. Use the *_update_after_creation columns: the aliases
-- will go in a later release (a numbered migration, since removing a column needs one).
-- CREATE OR REPLACE can only add columns at the end, hence the new names after the aliases.
--
-- This file is the view's one definition: edit it here and `paysync migrate` applies it (CREATE OR
-- REPLACE: analysts' own views built on this one stay). Columns may only be added at the end; renaming,
-- retyping or removing one needs a numbered migration first (the rule: src/warehouse/apply-views.ts).

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
       make_interval(secs => percentile_cont(0.9) WITHIN GROUP (ORDER BY s.seconds)) AS p90_seen_after_creation,
       make_interval(secs => percentile_cont(0.5) WITHIN GROUP (ORDER BY s.seconds)) AS median_update_after_creation,
       make_interval(secs => percentile_cont(0.9) WITHIN GROUP (ORDER BY s.seconds)) AS p90_update_after_creation
  FROM seen s LEFT JOIN now_in n ON n.status = s.status
 GROUP BY s.status
 ORDER BY array_position(ARRAY['INIT', 'PENDING', 'COMPLETE', 'FAILED', 'TIMEOUT'], s.status), s.status;

COMMENT ON VIEW reporting.payment_statuses_observed IS
  'Per status: payments observed in it at least once, payments in it now, median and p90 of the service''s updatedAt - createdAt on the first copy showing it. Statuses held between two reads are not observed.';
COMMENT ON COLUMN reporting.payment_statuses_observed.median_update_after_creation IS
  'Median over the payments observed in this status of updatedAt - createdAt (the service''s clocks) on the first copy showing it.';
COMMENT ON COLUMN reporting.payment_statuses_observed.p90_update_after_creation IS
  '90th percentile over the payments observed in this status of updatedAt - createdAt on the first copy showing it.';
COMMENT ON COLUMN reporting.payment_statuses_observed.median_seen_after_creation IS
  'Deprecated alias of median_update_after_creation (the service''s updatedAt - createdAt, not when paysync saw the record).';
COMMENT ON COLUMN reporting.payment_statuses_observed.p90_seen_after_creation IS
  'Deprecated alias of p90_update_after_creation (the service''s updatedAt - createdAt, not when paysync saw the record).';
