-- 012: what reconcile, the pack and the views say must be true.
--
-- reconcile_results gains `quarantined` (records of the day the service lists and paysync holds in
-- sync_rejects), `unexplained` (difference - quarantined: what nothing explains) and `amount_compared`
-- (whether the service's figures allowed an amount comparison: a wrapper total carries no amounts).
-- Rows written without it knew nothing of quarantine: their whole difference is unexplained.
-- reconcile_records: per reconcile run, the records behind the differences (missing in the warehouse,
-- missing at the source, status or amount different, quarantined), so the pack can list them.
-- export_versions gains `state` (final, provisional, incomplete): `final` alone could not say incomplete.
-- try_timestamptz: a reject's raw createdAt as an instant, or NULL when it is not one (rejects are
-- records that failed validation, so their dates may be anything).
-- Views: sync_health measured on the contiguous run of completed windows (with its first gap), never a
-- negative lag; payment_status_funnel, which counted the statuses sync happened to observe, is replaced
-- by views named for what they count: payment_statuses_observed and payment_status_transitions.

CREATE FUNCTION reporting.try_timestamptz(value text) RETURNS timestamptz
LANGUAGE plpgsql STABLE AS $$
BEGIN
  IF value IS NULL OR value !~ '^\d{4}-\d{2}-\d{2}T' THEN RETURN NULL; END IF;
  RETURN value::timestamptz;
EXCEPTION WHEN others THEN
  RETURN NULL;
END $$;
COMMENT ON FUNCTION reporting.try_timestamptz(text) IS
  'An ISO 8601 text as timestamptz, or NULL when it is not a valid instant (never raises).';

ALTER TABLE reporting.reconcile_results
  ADD COLUMN quarantined integer NOT NULL DEFAULT 0,
  ADD COLUMN unexplained integer,
  ADD COLUMN amount_compared boolean NOT NULL DEFAULT false;
-- unexplained stays nullable: a writer that predates it (a worker not yet upgraded) leaves it NULL,
-- which readers take as the whole difference (coalesce(unexplained, difference)).
UPDATE reporting.reconcile_results
   SET unexplained = difference, amount_compared = service_amount IS NOT NULL;

CREATE TABLE reporting.reconcile_records (
  run_id           uuid    NOT NULL,
  day              date    NOT NULL,
  source           text    NOT NULL,
  stream           text    NOT NULL,
  -- missing_in_warehouse, missing_at_source, different, quarantined
  kind             text    NOT NULL,
  record_id        text,
  service_status   text,
  warehouse_status text,
  service_amount   numeric,
  warehouse_amount numeric,
  reason           text,
  CONSTRAINT reconcile_records_kind CHECK
    (kind IN ('missing_in_warehouse', 'missing_at_source', 'different', 'quarantined'))
);
CREATE INDEX reconcile_records_run_idx ON reporting.reconcile_records (run_id);
CREATE INDEX reconcile_records_day_idx ON reporting.reconcile_records (day, source, stream);
COMMENT ON TABLE reporting.reconcile_records IS
  'Per reconcile run, each record behind a difference: missing in the warehouse or at the source, status or amount different, quarantined.';

ALTER TABLE reporting.export_versions ADD COLUMN state text;
UPDATE reporting.export_versions SET state = CASE WHEN final THEN 'final' ELSE 'provisional' END;
ALTER TABLE reporting.export_versions
  ALTER COLUMN state SET NOT NULL,
  ADD CONSTRAINT export_versions_state CHECK (state IN ('final', 'provisional', 'incomplete'));

-- Sync health: a window vouches for what existed when it was read, so it reaches at most its fetch time
-- (a backfill of today ends at midnight tonight; counting that end gave a negative lag). The run is the
-- contiguous union of complete windows from the earliest one; the first gap is where it stops.
DROP VIEW reporting.sync_health;
CREATE VIEW reporting.sync_health AS
WITH w AS (
  SELECT source, stream, window_start AS s, least(window_end, fetched_at) AS e
    FROM reporting.sync_windows
   WHERE outcome = 'complete'
),
reach AS (
  SELECT source, stream, s, e,
         max(e) OVER (PARTITION BY source, stream ORDER BY s, e
                      ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reached
    FROM w
),
first_gap AS (
  SELECT DISTINCT ON (source, stream) source, stream, reached AS gap_from, s AS gap_to
    FROM reach
   WHERE reached IS NOT NULL AND s > reached
   ORDER BY source, stream, s
),
run AS (
  SELECT w.source, w.stream, min(w.s) AS complete_from,
         coalesce(g.gap_from, max(w.e)) AS complete_until, g.gap_from, g.gap_to
    FROM w LEFT JOIN first_gap g USING (source, stream)
   GROUP BY w.source, w.stream, g.gap_from, g.gap_to
),
streams AS (
  SELECT DISTINCT source, stream FROM reporting.sync_windows
  UNION
  SELECT DISTINCT source, stream FROM reporting.sync_rejects
),
last_run AS (
  SELECT DISTINCT ON (source, stream) source, stream, fetched_at, kind, outcome, detail
    FROM reporting.sync_windows
   ORDER BY source, stream, fetched_at DESC
)
SELECT s.source,
       s.stream,
       r.complete_from,
       r.complete_until,
       greatest(now() - r.complete_until, interval '0') AS lag,
       r.gap_from AS first_gap_from,
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
  LEFT JOIN run r ON r.source = s.source AND r.stream = s.stream
  LEFT JOIN last_run l ON l.source = s.source AND l.stream = s.stream;
COMMENT ON VIEW reporting.sync_health IS
  'Per source and stream: the contiguous run of completed windows (from, until), lag = now - until (never negative), its first gap, last run, recent failures, open rejects.';

-- The service does not show how a payment moves between statuses (interface: "not shown"), and sync sees
-- a record only when it reads it: a status held between two reads is never seen. So these views count
-- what was observed, and say so in their names; they are not a funnel.
DROP VIEW reporting.payment_status_funnel;

CREATE VIEW reporting.payment_statuses_observed AS
WITH seen AS (
  SELECT h.status, extract(epoch FROM (h.updated_at - p.created_at)) AS seconds
    FROM reporting.payment_status_history h
    JOIN reporting.payments p ON p.id = h.payment_id
),
now_in AS (
  SELECT status, count(*)::bigint AS n FROM reporting.payments GROUP BY status
)
SELECT s.status,
       count(*)::bigint AS payments_seen_in,
       coalesce(max(n.n), 0)::bigint AS payments_now_in,
       make_interval(secs => percentile_cont(0.5) WITHIN GROUP (ORDER BY s.seconds)) AS median_seen_after_creation,
       make_interval(secs => percentile_cont(0.9) WITHIN GROUP (ORDER BY s.seconds)) AS p90_seen_after_creation
  FROM seen s LEFT JOIN now_in n ON n.status = s.status
 GROUP BY s.status
 ORDER BY array_position(ARRAY['INIT', 'PENDING', 'COMPLETE', 'FAILED', 'TIMEOUT'], s.status), s.status;
COMMENT ON VIEW reporting.payment_statuses_observed IS
  'Per status: payments sync observed in it at least once, payments in it now, median and p90 time from creation to the copy first showing it. Statuses held between two reads are not observed.';

CREATE VIEW reporting.payment_status_transitions AS
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
