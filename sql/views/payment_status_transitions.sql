-- reporting.payment_status_transitions: the moves between statuses paysync observed, as (from_status,
-- to_status) pairs of consecutive statuses of the same payment, with how many payments made each move and
-- the median time between the two copies (the service's updatedAt of each, median_between). Only observed
-- moves: the service does not show how a payment moves, and a status held between two of paysync's reads
-- is skipped (INIT -> COMPLETE may really be INIT -> PENDING -> COMPLETE). A payment appears here once
-- paysync has read it in two statuses.
--
-- This file is the view's one definition: edit it here and `paysync migrate` applies it (CREATE OR
-- REPLACE: analysts' own views built on this one stay). Columns may only be added at the end; renaming,
-- retyping or removing one needs a numbered migration first (the rule: src/warehouse/apply-views.ts).

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

COMMENT ON VIEW reporting.payment_status_transitions IS
  'Consecutive statuses sync observed for the same payment (from, to), how many payments, median time between the two copies. Only observed transitions: a status held between two reads is skipped.';
