-- 017: the two counts every transfers tick asks for, kept as rows land (README "Years of history").
--
-- A transfers tick (every SYNC_EVERY) asked two questions whose answer was a count over a source's whole
-- history:
-- - which organisation a source's payments belong to (transfers carry none: they get the source's):
--   SELECT organization_id FROM payments WHERE source = $1 GROUP BY 1 ORDER BY count(*) DESC LIMIT 1,
--   a scan of every payment (no index starts with source): seconds at 20M payments, each tick;
-- - how many transfer ids the source's list memory holds (013): count(*) of transfer_positions, one
--   row per transfer the service ever listed.
-- Both are now read from one row per source (and organisation), kept by triggers:
-- - INSERT and DELETE: statement-level triggers add what each statement inserted or deleted (transition
--   tables, one grouped upsert per statement, in key order so that two loads cannot deadlock on them);
--   an INSERT … ON CONFLICT DO UPDATE lists only the rows it inserted.
-- - UPDATE: a row-level trigger that fires only when a row's source or organisation changes (its WHEN
--   is tested before any function runs, so the loader's re-reads, which change neither, cost nothing).
-- - TRUNCATE: empties the source's counts of that table (a statement-level TRUNCATE trigger).
-- A count and the rows it counts commit in the same transaction, so a reader sees both or neither:
-- exact under concurrent loads. reporting.rebuild_source_counts() recomputes them from the rows.

CREATE TABLE reporting.payments_by_organisation (
  source          text   NOT NULL,
  organization_id text   NOT NULL,
  records         bigint NOT NULL,
  PRIMARY KEY (source, organization_id)
);
COMMENT ON TABLE reporting.payments_by_organisation IS
  'Payments per source and organisation, kept by triggers (sql/017): count(*) of reporting.payments.';

CREATE TABLE reporting.transfer_positions_held (
  source text   PRIMARY KEY,
  ids    bigint NOT NULL
);
COMMENT ON TABLE reporting.transfer_positions_held IS
  'Transfer ids remembered per source, kept by triggers (sql/017): count(*) of reporting.transfer_positions.';

-- jit off: compiling these small plans (costed without statistics on the transition tables) would cost
-- more than running them, as 014's trigger functions found.
CREATE FUNCTION reporting.payments_by_organisation_rows() RETURNS trigger LANGUAGE plpgsql
  SET jit = off AS $$
BEGIN
  -- Each branch names only the transition table its trigger defines (plpgsql resolves it when run).
  IF TG_OP = 'INSERT' THEN
    INSERT INTO reporting.payments_by_organisation AS c
    SELECT n.source, n.organization_id, count(*) FROM new_rows n GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (source, organization_id) DO UPDATE SET records = c.records + EXCLUDED.records;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO reporting.payments_by_organisation AS c
    SELECT o.source, o.organization_id, -count(*) FROM old_rows o GROUP BY 1, 2 ORDER BY 1, 2
    ON CONFLICT (source, organization_id) DO UPDATE SET records = c.records + EXCLUDED.records;
  ELSIF TG_OP = 'UPDATE' THEN
    -- one row whose source or organisation changed (the trigger's WHEN): it moves between two counts
    INSERT INTO reporting.payments_by_organisation AS c
    SELECT k.source, k.organization_id, k.delta
      FROM (VALUES (OLD.source, OLD.organization_id, -1), (NEW.source, NEW.organization_id, 1))
           k(source, organization_id, delta)
     ORDER BY 1, 2
    ON CONFLICT (source, organization_id) DO UPDATE SET records = c.records + EXCLUDED.records;
  ELSE -- TRUNCATE
    DELETE FROM reporting.payments_by_organisation;
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION reporting.transfer_positions_held_rows() RETURNS trigger LANGUAGE plpgsql
  SET jit = off AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO reporting.transfer_positions_held AS c
    SELECT n.source, count(*) FROM new_rows n GROUP BY 1 ORDER BY 1
    ON CONFLICT (source) DO UPDATE SET ids = c.ids + EXCLUDED.ids;
  ELSIF TG_OP = 'DELETE' THEN
    INSERT INTO reporting.transfer_positions_held AS c
    SELECT o.source, -count(*) FROM old_rows o GROUP BY 1 ORDER BY 1
    ON CONFLICT (source) DO UPDATE SET ids = c.ids + EXCLUDED.ids;
  ELSIF TG_OP = 'UPDATE' THEN
    INSERT INTO reporting.transfer_positions_held AS c
    SELECT k.source, k.delta FROM (VALUES (OLD.source, -1), (NEW.source, 1)) k(source, delta) ORDER BY 1
    ON CONFLICT (source) DO UPDATE SET ids = c.ids + EXCLUDED.ids;
  ELSE -- TRUNCATE
    DELETE FROM reporting.transfer_positions_held;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER payments_by_organisation_insert AFTER INSERT ON reporting.payments
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION reporting.payments_by_organisation_rows();
CREATE TRIGGER payments_by_organisation_delete AFTER DELETE ON reporting.payments
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION reporting.payments_by_organisation_rows();
CREATE TRIGGER payments_by_organisation_update AFTER UPDATE ON reporting.payments
  FOR EACH ROW
  WHEN (OLD.source IS DISTINCT FROM NEW.source OR OLD.organization_id IS DISTINCT FROM NEW.organization_id)
  EXECUTE FUNCTION reporting.payments_by_organisation_rows();
CREATE TRIGGER payments_by_organisation_truncate AFTER TRUNCATE ON reporting.payments
  FOR EACH STATEMENT EXECUTE FUNCTION reporting.payments_by_organisation_rows();

CREATE TRIGGER transfer_positions_held_insert AFTER INSERT ON reporting.transfer_positions
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION reporting.transfer_positions_held_rows();
CREATE TRIGGER transfer_positions_held_delete AFTER DELETE ON reporting.transfer_positions
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION reporting.transfer_positions_held_rows();
CREATE TRIGGER transfer_positions_held_update AFTER UPDATE ON reporting.transfer_positions
  FOR EACH ROW WHEN (OLD.source IS DISTINCT FROM NEW.source)
  EXECUTE FUNCTION reporting.transfer_positions_held_rows();
CREATE TRIGGER transfer_positions_held_truncate AFTER TRUNCATE ON reporting.transfer_positions
  FOR EACH STATEMENT EXECUTE FUNCTION reporting.transfer_positions_held_rows();

-- Recomputes both from the rows. SHARE locks wait for loads in flight and hold new ones back, so
-- nothing is counted twice or missed.
CREATE FUNCTION reporting.rebuild_source_counts() RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  LOCK TABLE reporting.payments, reporting.transfer_positions IN SHARE MODE;
  DELETE FROM reporting.payments_by_organisation;
  INSERT INTO reporting.payments_by_organisation
  SELECT source, organization_id, count(*) FROM reporting.payments GROUP BY 1, 2;
  DELETE FROM reporting.transfer_positions_held;
  INSERT INTO reporting.transfer_positions_held
  SELECT source, count(*) FROM reporting.transfer_positions GROUP BY 1;
END $$;

SELECT reporting.rebuild_source_counts();
