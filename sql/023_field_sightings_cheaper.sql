-- 023: 021's trigger on reporting.field_sightings, at a fraction of its cost.
--
-- 021 read every stored record's unknown_fields with json_each (a parse of each value) and grouped the
-- keys: about 10 µs a row inside the load's statement when every record carries unknown fields, more
-- than storing the row itself. The same counts now come in two steps: the rows are first grouped by their
-- unknown_fields text (a hash of the text, no parse), then only the distinct texts have their keys read
-- (json_object_keys: the keys, not the values), each weighted by how many rows share it; the example is
-- the key's value in the smallest such text. A service sending the same new fields with the same values
-- costs one parse per statement; one whose values differ per record, one key scan per record. What the
-- counts mean is unchanged (021's header): `records` = stored records carrying the field now.
CREATE OR REPLACE FUNCTION reporting.unknown_field_sightings() RETURNS trigger LANGUAGE plpgsql
  SET jit = off SET enable_nestloop = off AS $$
BEGIN
  -- Each branch names only the transition tables its trigger defines (plpgsql resolves them when run).
  IF TG_OP = 'INSERT' THEN
    WITH texts AS (
      SELECT unknown_fields::text AS u, min(source) AS source, count(*) AS n, true AS added
        FROM new_rows WHERE unknown_fields IS NOT NULL GROUP BY 1
    ), keyed AS (
      SELECT k AS key, t.u, t.source, t.n, t.added
        FROM texts t
        CROSS JOIN LATERAL json_object_keys(CASE WHEN json_typeof(t.u::json) = 'object' THEN t.u::json
                                                 ELSE '{}'::json END) k
    )
    INSERT INTO reporting.field_sightings AS f (stream, field, change, first_source, records, example)
    SELECT TG_TABLE_NAME, left(key, 200), 'added', min(source), sum(n),
           left(((min(u) FILTER (WHERE added))::json -> min(key))::text, 200)
      FROM keyed GROUP BY 2 ORDER BY 2
    ON CONFLICT (stream, field, change) DO UPDATE
      SET records = f.records + EXCLUDED.records, last_seen_at = now();
  ELSIF TG_OP = 'DELETE' THEN
    WITH texts AS (
      SELECT unknown_fields::text AS u, count(*) AS n
        FROM old_rows WHERE unknown_fields IS NOT NULL GROUP BY 1
    ), keyed AS (
      SELECT left(k, 200) AS key, sum(t.n) AS n
        FROM texts t
        CROSS JOIN LATERAL json_object_keys(CASE WHEN json_typeof(t.u::json) = 'object' THEN t.u::json
                                                 ELSE '{}'::json END) k
       GROUP BY 1
    )
    UPDATE reporting.field_sightings f SET records = f.records - d.n
      FROM keyed d
     WHERE f.stream = TG_TABLE_NAME AND f.field = d.key AND f.change = 'added';
  ELSE
    -- Only rows whose unknown fields changed: a re-read that moves synced_at adds nothing. Each side is
    -- filtered on its own before the join on id (a hash join), so a page without unknown fields costs a
    -- scan of the transition tables.
    WITH changed AS (
      SELECT n.unknown_fields::text AS u, n.source, 1 AS delta
        FROM new_rows n JOIN old_rows o ON o.id = n.id
       WHERE n.unknown_fields IS NOT NULL AND n.unknown_fields::text IS DISTINCT FROM o.unknown_fields::text
      UNION ALL
      SELECT o.unknown_fields::text, o.source, -1
        FROM old_rows o JOIN new_rows n ON n.id = o.id
       WHERE o.unknown_fields IS NOT NULL AND n.unknown_fields::text IS DISTINCT FROM o.unknown_fields::text
    ), texts AS (
      SELECT u, min(source) AS source, sum(delta) AS n, bool_or(delta > 0) AS added FROM changed GROUP BY 1
    ), keyed AS (
      SELECT k AS key, t.u, t.source, t.n, t.added
        FROM texts t
        CROSS JOIN LATERAL json_object_keys(CASE WHEN json_typeof(t.u::json) = 'object' THEN t.u::json
                                                 ELSE '{}'::json END) k
    )
    INSERT INTO reporting.field_sightings AS f (stream, field, change, first_source, records, example)
    SELECT TG_TABLE_NAME, left(key, 200), 'added', min(source), sum(n),
           left(((min(u) FILTER (WHERE added))::json -> min(key))::text, 200)
      FROM keyed GROUP BY 2 HAVING sum(n) <> 0 OR bool_or(added) ORDER BY 2
    ON CONFLICT (stream, field, change) DO UPDATE
      SET records = f.records + EXCLUDED.records,
          last_seen_at = CASE WHEN EXCLUDED.example IS NULL THEN f.last_seen_at ELSE now() END;
  END IF;
  RETURN NULL;
END $$;
