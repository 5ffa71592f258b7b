-- reporting.sync_health: one row per source and stream (payments, transfers) paysync has read or
-- quarantined records of, answering "how far is the warehouse complete, and is sync working?":
-- - complete_from .. complete_until: the contiguous run of windows read completely, from the earliest one.
--   A window vouches for what existed when it was read, so it counts up to its fetch time at most (a
--   backfill of today does not reach into tonight).
-- - lag: now - complete_until, never negative.
-- - first_gap_from .. first_gap_to: the first stretch after the run that no complete window covers (say,
--   a window that failed and has not been read again since): where the run stops. NULL when none.
-- - last_run_at, last_run_kind, last_outcome, last_detail: the latest window run, whatever its outcome.
-- - not_complete_last_day: window runs of the last 24 hours that did not end complete.
-- - open_rejects: quarantined records with no valid copy since (reporting.open_rejects lists them).
-- The run is kept per source and stream in reporting.sync_runs as windows are logged
-- (sql/017_source_counts.sql), so the view reads a few index entries however long the sync log.
--
-- This file is the view's one definition: edit it here and `paysync migrate` applies it (CREATE OR
-- REPLACE: analysts' own views built on this one stay). Columns may only be added at the end; renaming,
-- retyping or removing one needs a numbered migration first (the rule: src/warehouse/apply-views.ts).

-- The streams are found by skip scans of the (source, stream, …) indexes, the last run by the
-- (source, stream, fetched_at DESC) index.
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

COMMENT ON VIEW reporting.sync_health IS
  'Per source and stream: the contiguous run of completed windows (from, until), lag = now - until (never negative), its first gap, last run, recent failures, open rejects.';
