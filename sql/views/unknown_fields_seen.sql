-- reporting.unknown_fields_seen: one row per stream (payments, transfers) and field the service sent that
-- its interface does not list, answering "what has the service started sending, since when, is it still
-- coming, and how do I read it?":
-- - first_seen_at: when a record carrying it was first stored; first_source: the paysync source it came from.
-- - last_seen_at: when a record carrying it was last stored or changed (a re-read of an unchanged record
--   does not move it).
-- - records: how many stored records carry it now (in their unknown_fields column).
-- - example: one value as stored (JSON text, at most 200 characters; any form of the API key replaced).
-- - acknowledged_at, acknowledged_by: who took note of it with `paysync probe --ack FIELD` (NULL: nobody yet).
-- - read_with: the expression that reads it, ready to paste (`unknown_fields->>'fee_amount'`).
-- Kept in reporting.field_sightings by triggers as records land (sql/021_unknown_fields.sql), so the view
-- reads a handful of rows however many records carry the fields.
--
-- This file is the view's one definition: edit it here and `paysync migrate` applies it (CREATE OR
-- REPLACE: analysts' own views built on this one stay). Columns may only be added at the end; renaming,
-- retyping or removing one needs a numbered migration first (the rule: src/warehouse/apply-views.ts).

CREATE OR REPLACE VIEW reporting.unknown_fields_seen AS
SELECT s.stream,
       s.field,
       s.first_seen_at,
       s.last_seen_at,
       s.records,
       s.example,
       s.first_source,
       s.acknowledged_at,
       s.acknowledged_by,
       format('unknown_fields->>%L', s.field) AS read_with
FROM reporting.field_sightings s
WHERE s.change = 'added'
ORDER BY s.stream, s.first_seen_at, s.field;

COMMENT ON VIEW reporting.unknown_fields_seen IS
  'Fields the service sent that its interface does not list, per stream: first and last seen, stored records carrying them, an example, who acknowledged them.';
