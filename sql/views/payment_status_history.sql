-- reporting.payment_status_history: each status a payment was seen in, once per (payment, status), with
-- updated_at, the service's own updatedAt on the first copy paysync read in that status (the best
-- estimate of when the payment entered it), seen_at, when paysync first stored that copy, and the source
-- it came from. The service shows only a record's current status, never its moves: a status held between
-- two of paysync's reads is not here. A deleted record's history stays.
-- Stored as: the first status on the record's own row (reporting.payments.first_status and its
-- neighbours) and any later one in reporting.payment_status_changes; this view joins the two. The first
-- status is left out when the changes table holds the same (record, status): that happens only for a
-- record deleted and loaded again, whose earlier sighting was kept and stays first.
--
-- This file is the view's one definition: edit it here and `paysync migrate` applies it (CREATE OR
-- REPLACE: analysts' own views built on this one stay). Columns may only be added at the end; renaming,
-- retyping or removing one needs a numbered migration first (the rule: src/warehouse/apply-views.ts).

CREATE OR REPLACE VIEW reporting.payment_status_history AS
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
