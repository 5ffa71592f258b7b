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
-- - UPDATE: a statement-level trigger too, joining old and new rows on their key (a hash join): only
--   rows whose source or organisation changed move between counts, so a re-read adds nothing. (Not a
--   row-level trigger: one statement moving 150k rows would update the same count row 150k times in
--   one transaction, each update walking the chain of the previous versions: it ran for minutes.)
-- - TRUNCATE: empties the source's counts of that table (a statement-level TRUNCATE trigger).
-- A count and the rows it counts commit in the same transaction, so a reader sees both or neither:
-- exact under concurrent loads. reporting.rebuild_source_counts() recomputes them from the rows.
--
-- And reporting.sync_health (012's meaning: lag measured on the contiguous run of complete windows from
-- the first one, with the first gap) read every complete window of the sync log on each query (624 rows
-- a day: 1.1 s at 200 days). The run is now kept per source and stream in reporting.sync_runs (part 2).

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

-- jit and nested loops off, as 014's trigger functions: compiling these small plans (costed without
-- statistics on the transition tables) would cost more than running them, and a nested loop would join
-- old and new rows pairwise.
CREATE FUNCTION reporting.payments_by_organisation_rows() RETURNS trigger LANGUAGE plpgsql
  SET jit = off SET enable_nestloop = off AS $$
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
    -- only rows whose source or organisation changed move between counts (a re-read adds nothing);
    -- joined on id (a hash join, as 014's)
    INSERT INTO reporting.payments_by_organisation AS c
    SELECT k.source, k.organization_id, sum(k.delta)
      FROM (
        SELECT o.source, o.organization_id, -1 AS delta FROM old_rows o LEFT JOIN new_rows n ON n.id = o.id
         WHERE n.id IS NULL OR n.source IS DISTINCT FROM o.source OR n.organization_id IS DISTINCT FROM o.organization_id
        UNION ALL
        SELECT n.source, n.organization_id, 1 FROM new_rows n LEFT JOIN old_rows o ON o.id = n.id
         WHERE o.id IS NULL OR n.source IS DISTINCT FROM o.source OR n.organization_id IS DISTINCT FROM o.organization_id
      ) k
     GROUP BY 1, 2 HAVING sum(k.delta) <> 0 ORDER BY 1, 2
    ON CONFLICT (source, organization_id) DO UPDATE SET records = c.records + EXCLUDED.records;
  ELSE -- TRUNCATE
    DELETE FROM reporting.payments_by_organisation;
  END IF;
  RETURN NULL;
END $$;

CREATE FUNCTION reporting.transfer_positions_held_rows() RETURNS trigger LANGUAGE plpgsql
  SET jit = off SET enable_nestloop = off AS $$
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
    -- only rows whose key (source, id) changed move between counts
    INSERT INTO reporting.transfer_positions_held AS c
    SELECT k.source, sum(k.delta)
      FROM (
        SELECT o.source, -1 AS delta FROM old_rows o LEFT JOIN new_rows n ON (n.source, n.id) = (o.source, o.id)
         WHERE n.id IS NULL
        UNION ALL
        SELECT n.source, 1 FROM new_rows n LEFT JOIN old_rows o ON (o.source, o.id) = (n.source, n.id)
         WHERE o.id IS NULL
      ) k
     GROUP BY 1 HAVING sum(k.delta) <> 0 ORDER BY 1
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
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION reporting.payments_by_organisation_rows();
CREATE TRIGGER payments_by_organisation_truncate AFTER TRUNCATE ON reporting.payments
  FOR EACH STATEMENT EXECUTE FUNCTION reporting.payments_by_organisation_rows();

CREATE TRIGGER transfer_positions_held_insert AFTER INSERT ON reporting.transfer_positions
  REFERENCING NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION reporting.transfer_positions_held_rows();
CREATE TRIGGER transfer_positions_held_delete AFTER DELETE ON reporting.transfer_positions
  REFERENCING OLD TABLE AS old_rows
  FOR EACH STATEMENT EXECUTE FUNCTION reporting.transfer_positions_held_rows();
CREATE TRIGGER transfer_positions_held_update AFTER UPDATE ON reporting.transfer_positions
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION reporting.transfer_positions_held_rows();
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

-- 2. sync_health's contiguous run, kept.
--
-- 012 defines, over a stream's complete windows w(s = window_start, e = least(window_end, fetched_at)):
-- complete_from = min(s); the first gap is the first window (by s, e) that starts after every earlier
-- window ended (reached = max e before it); complete_until = that reach, or max(e) without a gap.
-- Kept here as (complete_from, complete_until, gap_to); complete_until is then the fixpoint "max e of the
-- windows starting at or before it", which is what a statement adding windows extends:
-- - windows only added, or grown (a re-run of a complete window ends later): start from the earlier of
--   the run's start and theirs, and extend through the new windows and, past the kept end, the table's
--   (an index range scan over the newly covered windows only: the kept end vouches for what it covers);
-- - a complete window removed, shrunk or made incomplete (a re-run that failed), or one ending before it
--   starts: that stream is recomputed from the log with 012's definition (rare, and only that stream).
-- Each stream's run row is locked before it is read, so two loads apply their windows one after the
-- other, each seeing the other's once committed. TRUNCATE empties it; rebuild_sync_runs() recomputes all.
CREATE TABLE reporting.sync_runs (
  source         text        NOT NULL,
  stream         text        NOT NULL,
  complete_from  timestamptz,
  complete_until timestamptz,
  gap_to         timestamptz,
  PRIMARY KEY (source, stream)
);
COMMENT ON TABLE reporting.sync_runs IS
  'Per source and stream: the contiguous run of complete sync windows and the start of the window after its first gap, kept by triggers (sql/017). Read reporting.sync_health.';

-- Locks the stream's run row (creating it empty), so what follows sees every window committed before.
CREATE FUNCTION reporting.sync_run_lock(p_source text, p_stream text) RETURNS reporting.sync_runs
LANGUAGE plpgsql AS $$
DECLARE
  run reporting.sync_runs;
BEGIN
  INSERT INTO reporting.sync_runs (source, stream) VALUES (p_source, p_stream) ON CONFLICT DO NOTHING;
  SELECT * INTO run FROM reporting.sync_runs WHERE source = p_source AND stream = p_stream FOR UPDATE;
  RETURN run;
END $$;

-- 012's definition, for one stream.
CREATE FUNCTION reporting.sync_run_recompute(p_source text, p_stream text) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM reporting.sync_run_lock(p_source, p_stream);
  WITH w AS (
    SELECT window_start AS s, least(window_end, fetched_at) AS e FROM reporting.sync_windows
     WHERE source = p_source AND stream = p_stream AND outcome = 'complete'
  ),
  reach AS (
    SELECT s, e, max(e) OVER (ORDER BY s, e ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reached FROM w
  ),
  first_gap AS (
    SELECT reached AS gap_from, s AS gap_to FROM reach WHERE reached IS NOT NULL AND s > reached ORDER BY s LIMIT 1
  )
  UPDATE reporting.sync_runs r
     SET complete_from = (SELECT min(s) FROM w),
         complete_until = coalesce((SELECT gap_from FROM first_gap), (SELECT max(e) FROM w)),
         gap_to = (SELECT gap_to FROM first_gap)
   WHERE r.source = p_source AND r.stream = p_stream;
END $$;

-- Adds complete windows (starts ns, ends ne) to the stream's kept run; see above.
CREATE FUNCTION reporting.sync_run_extend(p_source text, p_stream text, ns timestamptz[], ne timestamptz[])
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  run reporting.sync_runs;
  reach timestamptz;
  scanned timestamptz;
  candidate timestamptz;
  start timestamptz;
BEGIN
  run := reporting.sync_run_lock(p_source, p_stream);
  IF run.complete_from IS NULL OR EXISTS (SELECT 1 FROM unnest(ns, ne) n(s, e) WHERE n.e < n.s) THEN
    PERFORM reporting.sync_run_recompute(p_source, p_stream);
    RETURN;
  END IF;
  reach := least(run.complete_from, (SELECT min(s) FROM unnest(ns) s));
  start := reach;
  -- windows starting at or before the kept end are either old (ending at or before it) or new (ns/ne)
  scanned := run.complete_until;
  LOOP
    candidate := (SELECT max(n.e) FROM unnest(ns, ne) n(s, e) WHERE n.s <= reach);
    IF reach >= run.complete_from THEN
      candidate := greatest(candidate, run.complete_until);
    END IF;
    IF reach > scanned THEN
      candidate := greatest(candidate, (
        SELECT max(least(w.window_end, w.fetched_at)) FROM reporting.sync_windows w
         WHERE w.source = p_source AND w.stream = p_stream AND w.outcome = 'complete'
           AND w.window_start > scanned AND w.window_start <= reach));
      scanned := reach;
    END IF;
    EXIT WHEN candidate IS NULL OR candidate <= reach;
    reach := candidate;
  END LOOP;
  UPDATE reporting.sync_runs r
     SET complete_from = start,
         complete_until = reach,
         gap_to = (SELECT min(w.window_start) FROM reporting.sync_windows w
                    WHERE w.source = p_source AND w.stream = p_stream AND w.outcome = 'complete'
                      AND w.window_start > reach)
   WHERE r.source = p_source AND r.stream = p_stream;
END $$;

CREATE FUNCTION reporting.sync_runs_rows() RETURNS trigger LANGUAGE plpgsql
  SET jit = off AS $$
DECLARE
  k record;
BEGIN
  -- Each branch names only the transition tables its trigger defines; streams in key order.
  IF TG_OP = 'INSERT' THEN
    FOR k IN SELECT n.source, n.stream, array_agg(n.window_start) AS s,
                    array_agg(least(n.window_end, n.fetched_at)) AS e
               FROM new_rows n WHERE n.outcome = 'complete' GROUP BY 1, 2 ORDER BY 1, 2 LOOP
      PERFORM reporting.sync_run_extend(k.source, k.stream, k.s, k.e);
    END LOOP;
  ELSIF TG_OP = 'UPDATE' THEN
    FOR k IN
      WITH lost AS (
        -- a complete window whose new version is gone (key changed), incomplete or ends earlier
        SELECT DISTINCT o.source, o.stream FROM old_rows o
          LEFT JOIN new_rows n ON (n.source, n.stream, n.window_start, n.window_end)
                                = (o.source, o.stream, o.window_start, o.window_end)
         WHERE o.outcome = 'complete'
           AND (n.source IS NULL OR n.outcome <> 'complete'
                OR least(n.window_end, n.fetched_at) < least(o.window_end, o.fetched_at))
      ),
      added AS (
        SELECT n.source, n.stream, array_agg(n.window_start) AS s,
               array_agg(least(n.window_end, n.fetched_at)) AS e
          FROM new_rows n WHERE n.outcome = 'complete' GROUP BY 1, 2
      )
      SELECT coalesce(a.source, l.source) AS source, coalesce(a.stream, l.stream) AS stream,
             l.source IS NOT NULL AS lost, a.s, a.e
        FROM added a FULL JOIN lost l ON (l.source, l.stream) = (a.source, a.stream)
       ORDER BY 1, 2
    LOOP
      IF k.lost THEN
        PERFORM reporting.sync_run_recompute(k.source, k.stream);
      ELSE
        PERFORM reporting.sync_run_extend(k.source, k.stream, k.s, k.e);
      END IF;
    END LOOP;
  ELSIF TG_OP = 'DELETE' THEN
    FOR k IN SELECT DISTINCT o.source, o.stream FROM old_rows o WHERE o.outcome = 'complete' ORDER BY 1, 2 LOOP
      PERFORM reporting.sync_run_recompute(k.source, k.stream);
    END LOOP;
  ELSE -- TRUNCATE
    DELETE FROM reporting.sync_runs;
  END IF;
  RETURN NULL;
END $$;

CREATE TRIGGER sync_runs_insert AFTER INSERT ON reporting.sync_windows
  REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION reporting.sync_runs_rows();
CREATE TRIGGER sync_runs_update AFTER UPDATE ON reporting.sync_windows
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION reporting.sync_runs_rows();
CREATE TRIGGER sync_runs_delete AFTER DELETE ON reporting.sync_windows
  REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION reporting.sync_runs_rows();
CREATE TRIGGER sync_runs_truncate AFTER TRUNCATE ON reporting.sync_windows
  FOR EACH STATEMENT EXECUTE FUNCTION reporting.sync_runs_rows();

-- Recomputes every stream's run from the log (SHARE: waits for loads in flight, holds new ones back).
CREATE FUNCTION reporting.rebuild_sync_runs() RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  k record;
BEGIN
  LOCK TABLE reporting.sync_windows IN SHARE MODE;
  DELETE FROM reporting.sync_runs;
  FOR k IN SELECT DISTINCT source, stream FROM reporting.sync_windows WHERE outcome = 'complete' ORDER BY 1, 2 LOOP
    PERFORM reporting.sync_run_recompute(k.source, k.stream);
  END LOOP;
END $$;

SELECT reporting.rebuild_sync_runs();

-- The view: 012's columns and meaning, the run read from sync_runs, the streams found by skip scans of
-- the (source, stream, …) indexes and the last run by the (source, stream, fetched_at DESC) index.
CREATE OR REPLACE VIEW reporting.sync_health AS
WITH RECURSIVE window_streams AS (
  (SELECT source, stream FROM reporting.sync_windows ORDER BY source, stream LIMIT 1)
  UNION ALL
  SELECT n.source, n.stream
    FROM window_streams s,
         LATERAL (SELECT w.source, w.stream FROM reporting.sync_windows w
                   WHERE (w.source, w.stream) > (s.source, s.stream)
                   ORDER BY w.source, w.stream LIMIT 1) n
),
reject_streams AS (
  (SELECT source, stream FROM reporting.sync_rejects ORDER BY source, stream LIMIT 1)
  UNION ALL
  SELECT n.source, n.stream
    FROM reject_streams s,
         LATERAL (SELECT r.source, r.stream FROM reporting.sync_rejects r
                   WHERE (r.source, r.stream) > (s.source, s.stream)
                   ORDER BY r.source, r.stream LIMIT 1) n
),
streams AS (
  SELECT source, stream FROM window_streams
  UNION
  SELECT source, stream FROM reject_streams
)
SELECT s.source,
       s.stream,
       r.complete_from,
       r.complete_until,
       greatest(now() - r.complete_until, interval '0') AS lag,
       CASE WHEN r.gap_to IS NOT NULL THEN r.complete_until END AS first_gap_from,
       r.gap_to AS first_gap_to,
       l.fetched_at AS last_run_at,
       l.kind AS last_run_kind,
       l.outcome AS last_outcome,
       l.detail AS last_detail,
       (SELECT count(*) FROM reporting.sync_windows x
         WHERE x.source = s.source AND x.stream = s.stream AND x.outcome <> 'complete'
           AND x.fetched_at > now() - interval '1 day')::bigint AS not_complete_last_day,
       (SELECT count(*) FROM reporting.sync_rejects x
         WHERE x.source = s.source AND x.stream = s.stream AND x.resolved_at IS NULL)::bigint AS open_rejects
  FROM streams s
  LEFT JOIN reporting.sync_runs r ON r.source = s.source AND r.stream = s.stream
  LEFT JOIN LATERAL (
    SELECT w.fetched_at, w.kind, w.outcome, w.detail FROM reporting.sync_windows w
     WHERE w.source = s.source AND w.stream = s.stream
     ORDER BY w.fetched_at DESC LIMIT 1
  ) l ON true;
