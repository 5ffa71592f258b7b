-- 021: the fields a record carries that the service's interface does not list, kept in the record's row;
-- and each change in the shape of the service's records, announced until acknowledged (part 2).
--
-- 1. unknown_fields. The service may grow its records (a `fee_amount`, a `channel`) before paysync's contract knows the new
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

-- 2. reporting.field_sightings: each change in the shape of the service's records, announced once until
-- someone acknowledges it (`paysync probe --ack FIELD`).
-- - `added`: a field the interface does not list, first stored with a record (its value is in the
--   record's unknown_fields). Kept by statement-level triggers on payments and transfers (transition
--   tables, one grouped upsert per statement, as 014's daily totals): `records` is how many stored records
--   carry it now (a record that drops it, or is deleted, counts no more), `example` one value as stored
--   (key-scrubbed like the column, cut to 200 characters), `last_seen_at` when a record carrying it was
--   last stored or changed. A statement whose rows carry no unknown field adds nothing.
-- - `missing`, `retyped`: a field the interface lists that a record sent without it, or with another
--   JSON type. Such a record is quarantined in sync_rejects with its reason, as before; the loader also
--   records the sighting here: `records` counts the distinct quarantined copies, `example` is the value
--   received (retyped), `detail` what the schema said.
-- A sighting is one row per (stream, field, change), so a re-read never announces it again;
-- acknowledged_at and acknowledged_by say who took note of it, and when.
CREATE TABLE reporting.field_sightings (
  stream          text        NOT NULL,
  field           text        NOT NULL,
  change          text        NOT NULL CHECK (change IN ('added', 'missing', 'retyped')),
  first_seen_at   timestamptz NOT NULL DEFAULT now(),
  last_seen_at    timestamptz NOT NULL DEFAULT now(),
  first_source    text        NOT NULL,
  records         bigint      NOT NULL DEFAULT 0,
  example         text,
  detail          text,
  acknowledged_at timestamptz,
  acknowledged_by text,
  PRIMARY KEY (stream, field, change),
  CONSTRAINT field_sightings_acknowledged CHECK ((acknowledged_at IS NULL) = (acknowledged_by IS NULL))
);
COMMENT ON TABLE reporting.field_sightings IS
  'Changes in the shape of the service''s records (a field added, missing or retyped), first seen when, on how many records; acknowledged by whom and when.';

-- jit and nested loops off, as 014's trigger functions: these small plans are costed without statistics
-- on the transition tables. One function for both tables: TG_TABLE_NAME is the stream.
CREATE FUNCTION reporting.unknown_field_sightings() RETURNS trigger LANGUAGE plpgsql
  SET jit = off SET enable_nestloop = off AS $$
BEGIN
  -- Each branch names only the transition tables its trigger defines (plpgsql resolves them when run).
  IF TG_OP = 'INSERT' THEN
    INSERT INTO reporting.field_sightings AS f (stream, field, change, first_source, records, example)
    SELECT TG_TABLE_NAME, k.key, 'added', min(n.source), count(*), left(min(k.value::text), 200)
      FROM new_rows n CROSS JOIN LATERAL json_each(n.unknown_fields) k
     WHERE n.unknown_fields IS NOT NULL AND json_typeof(n.unknown_fields) = 'object'
     GROUP BY k.key ORDER BY k.key
    ON CONFLICT (stream, field, change) DO UPDATE
      SET records = f.records + EXCLUDED.records, last_seen_at = now();
  ELSIF TG_OP = 'DELETE' THEN
    UPDATE reporting.field_sightings f SET records = f.records - d.n
      FROM (SELECT k.key, count(*) AS n
              FROM old_rows o CROSS JOIN LATERAL json_each(o.unknown_fields) k
             WHERE o.unknown_fields IS NOT NULL AND json_typeof(o.unknown_fields) = 'object'
             GROUP BY k.key) d
     WHERE f.stream = TG_TABLE_NAME AND f.field = d.key AND f.change = 'added';
  ELSE
    -- Only rows whose unknown fields changed: a re-read that moves synced_at adds nothing. Each side is
    -- filtered on its own before the join (a hash join on id), so a page without unknown fields costs a
    -- scan of the transition tables.
    INSERT INTO reporting.field_sightings AS f (stream, field, change, first_source, records, example)
    SELECT TG_TABLE_NAME, c.key, 'added', min(c.source), sum(c.delta), left(min(c.value), 200)
      FROM (
        SELECT k.key, k.value::text AS value, n.source, 1 AS delta
          FROM (SELECT * FROM new_rows WHERE unknown_fields IS NOT NULL) n
          LEFT JOIN old_rows o ON o.id = n.id
          CROSS JOIN LATERAL json_each(n.unknown_fields) k
         WHERE json_typeof(n.unknown_fields) = 'object'
           AND n.unknown_fields::text IS DISTINCT FROM o.unknown_fields::text
        UNION ALL
        SELECT k.key, NULL, o.source, -1
          FROM (SELECT * FROM old_rows WHERE unknown_fields IS NOT NULL) o
          LEFT JOIN new_rows n ON n.id = o.id
          CROSS JOIN LATERAL json_each(o.unknown_fields) k
         WHERE json_typeof(o.unknown_fields) = 'object'
           AND n.unknown_fields::text IS DISTINCT FROM o.unknown_fields::text
      ) c
     GROUP BY c.key HAVING sum(c.delta) <> 0 OR min(c.value) IS NOT NULL ORDER BY c.key
    ON CONFLICT (stream, field, change) DO UPDATE
      SET records = f.records + EXCLUDED.records,
          last_seen_at = CASE WHEN EXCLUDED.example IS NULL THEN f.last_seen_at ELSE now() END;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER payments_unknown_field_sightings_insert AFTER INSERT ON reporting.payments
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION reporting.unknown_field_sightings();
CREATE TRIGGER payments_unknown_field_sightings_update AFTER UPDATE ON reporting.payments
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION reporting.unknown_field_sightings();
CREATE TRIGGER payments_unknown_field_sightings_delete AFTER DELETE ON reporting.payments
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION reporting.unknown_field_sightings();
CREATE TRIGGER transfers_unknown_field_sightings_insert AFTER INSERT ON reporting.transfers
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION reporting.unknown_field_sightings();
CREATE TRIGGER transfers_unknown_field_sightings_update AFTER UPDATE ON reporting.transfers
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION reporting.unknown_field_sightings();
CREATE TRIGGER transfers_unknown_field_sightings_delete AFTER DELETE ON reporting.transfers
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION reporting.unknown_field_sightings();
