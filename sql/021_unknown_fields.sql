-- 021: the fields a record carries that the service's interface does not list, kept in the record's row.
--
-- The service may grow its records (a `fee_amount`, a `channel`) before paysync's contract knows the new
-- fields. They are not dropped: each record's unknown fields are stored, as a JSON object, in
-- unknown_fields, and move with the record under the loader's forward-only rule (a newer copy, or
-- different content at the same updatedAt, replaces them; an older copy never does). NULL when the record
-- has none, which costs nothing.
--
-- json, not jsonb: json keeps the text it is given, so a number keeps the digits the service sent
-- (125.50 stays 125.50; jsonb would write 125.5, and would refuse \u0000 and keep only one of two
-- repeated keys). The loader writes each value as it was parsed with every number's text kept; a field
-- holding the API key is stored with the key replaced by a fixed marker, like every stored field.
-- Analysts read a field with `unknown_fields->>'fee_amount'` (->> works on json), or cast to jsonb for
-- jsonb's operators. The packs' files do not carry these fields: a pack's columns are finance's contract.
ALTER TABLE reporting.payments ADD COLUMN unknown_fields json;
ALTER TABLE reporting.transfers ADD COLUMN unknown_fields json;

COMMENT ON COLUMN reporting.payments.unknown_fields IS
  'Fields the service sent that paysync''s contract does not know, exactly as sent (numbers keep their digits); NULL when none.';
COMMENT ON COLUMN reporting.transfers.unknown_fields IS
  'Fields the service sent that paysync''s contract does not know, exactly as sent (numbers keep their digits); NULL when none.';
