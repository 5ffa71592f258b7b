-- 004: the durable sync log, one row per (source, stream, window) updated on every run of that window.
--
-- Checkpoints live in Redis for speed; this table is what they are rebuilt from when Redis is lost
-- (principle 4). A window is written here only after its rows are committed, in the same transaction
-- as its last page. reported_total is the service's own `total`, kept beside what actually arrived so
-- that a mismatch stays visible.
CREATE TABLE reporting.sync_windows (
  source           text        NOT NULL,
  stream           text        NOT NULL,
  window_start     timestamptz NOT NULL,
  window_end       timestamptz NOT NULL,
  kind             text        NOT NULL,
  fetched_at       timestamptz NOT NULL,
  records          integer     NOT NULL,
  rejects          integer     NOT NULL DEFAULT 0,
  reported_total   integer,
  pages            integer     NOT NULL,
  outcome          text        NOT NULL,
  detail           text,
  attempts         integer     NOT NULL DEFAULT 1,
  first_fetched_at timestamptz NOT NULL,
  PRIMARY KEY (source, stream, window_start, window_end),
  CONSTRAINT sync_windows_ordered CHECK (window_end > window_start),
  CONSTRAINT sync_windows_outcome CHECK (outcome IN ('complete', 'incomplete', 'failed'))
);

-- Checkpoint rebuild and sync health read the latest windows of one source and stream.
CREATE INDEX sync_windows_recent_idx ON reporting.sync_windows (source, stream, window_end DESC);

COMMENT ON TABLE reporting.sync_windows IS
  'Durable sync log: per source, stream and window, the last run (records, service total, pages, outcome).';
