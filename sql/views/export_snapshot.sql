-- reporting.export_snapshot: one row per record of each day's latest published pack version (day,
-- stream, id, status, amount, updated_at): what the next export of that day is compared with to tell a
-- restatement (records added, removed or changed) from an unchanged day. It reads
-- reporting.export_snapshot_days, which stores each day and stream as parallel arrays (one row instead of
-- one per record, written on every export).
--
-- This file is the view's one definition: edit it here and `paysync migrate` applies it (CREATE OR
-- REPLACE: analysts' own views built on this one stay). Columns may only be added at the end; renaming,
-- retyping or removing one needs a numbered migration first (the rule: src/warehouse/apply-views.ts).

CREATE OR REPLACE VIEW reporting.export_snapshot AS
SELECT d.day, d.stream, r.id, r.status, r.amount, r.updated_at
  FROM reporting.export_snapshot_days d
 CROSS JOIN LATERAL unnest(d.ids, d.statuses, d.amounts, d.updated_ats) AS r(id, status, amount, updated_at);

COMMENT ON VIEW reporting.export_snapshot IS
  'One row per record of each day''s latest published pack version: what the next restatement is compared with.';
