-- reporting.open_rejects: the records paysync quarantined (they failed validation or could not be stored)
-- and for which no valid copy has loaded since the service last listed them (a reject listed again after a
-- valid copy resolved it is open again): what someone still has to look at, newest first. Each row
-- says where it came from (source, stream, the record's id when it had one), why it was refused, how many
-- times and when it was seen, and the record exactly as the service sent it (raw).
--
-- This file is the view's one definition: edit it here and `paysync migrate` applies it (CREATE OR
-- REPLACE: analysts' own views built on this one stay). Columns may only be added at the end; renaming,
-- retyping or removing one needs a numbered migration first (the rule: src/warehouse/apply-views.ts).

CREATE OR REPLACE VIEW reporting.open_rejects AS
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
