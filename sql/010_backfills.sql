-- 010: durable backfills. A backfill is a row here, and every window (or transfers full scan) it asked
-- for is a row of backfill_items, with its state.
--
-- Redis holds the queue, and Redis may lose it (restarted empty, FLUSHALL, evicted): PostgreSQL is what
-- says which work remains (principle 4). Workers re-queue every item still 'queued' or 'running' from
-- these rows, `backfill --wait` reads its progress here, and an item killed mid-run any number of times
-- stays 'running' until a run of it reaches a verdict.
--
-- An item's state: queued (recorded, not started), running (a worker started it; `runs` counts the
-- starts, so a crash loop is visible), done (its rows are committed and the window's verdict is
-- complete), failed (what retrying cannot fix, or its retries ran out: `detail` says why), cancelled.
-- A backfill's state: running until no item is queued or running, then done or failed; or cancelled.
CREATE TABLE reporting.backfills (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  sources      text[]      NOT NULL,
  streams      text[]      NOT NULL,
  from_day     date        NOT NULL,
  to_day       date        NOT NULL,
  time_zone    text        NOT NULL,
  requested_at timestamptz NOT NULL DEFAULT now(),
  state        text        NOT NULL DEFAULT 'running',
  finished_at  timestamptz,
  CONSTRAINT backfills_state CHECK (state IN ('running', 'done', 'failed', 'cancelled')),
  CONSTRAINT backfills_range CHECK (to_day >= from_day)
);

-- `backfill` looks for an unfinished backfill of the same request before recording a new one.
CREATE INDEX backfills_running_idx ON reporting.backfills (state) WHERE state = 'running';

CREATE TABLE reporting.backfill_items (
  backfill_id  bigint      NOT NULL REFERENCES reporting.backfills (id) ON DELETE CASCADE,
  -- The item's deterministic key (window|source|payments|start|end, scan|source|transfers): with the
  -- backfill id it names the item's job in Redis, so re-queueing it twice adds it once.
  item_key     text        NOT NULL,
  name         text        NOT NULL,
  source       text        NOT NULL,
  stream       text        NOT NULL,
  window_start timestamptz,
  window_end   timestamptz,
  label        text        NOT NULL,
  state        text        NOT NULL DEFAULT 'queued',
  runs         integer     NOT NULL DEFAULT 0,
  records      integer,
  detail       text,
  started_at   timestamptz,
  finished_at  timestamptz,
  PRIMARY KEY (backfill_id, item_key),
  CONSTRAINT backfill_items_name CHECK (name IN ('window', 'scan')),
  CONSTRAINT backfill_items_state CHECK (state IN ('queued', 'running', 'done', 'failed', 'cancelled')),
  CONSTRAINT backfill_items_window CHECK (
    (name = 'window' AND window_start IS NOT NULL AND window_end > window_start)
    OR (name = 'scan' AND window_start IS NULL AND window_end IS NULL))
);

-- The re-queue reads the unfinished items of every backfill.
CREATE INDEX backfill_items_open_idx ON reporting.backfill_items (backfill_id)
  WHERE state IN ('queued', 'running');

COMMENT ON TABLE reporting.backfills IS
  'Durable backfills: what was asked (sources, streams, local day range) and whether it is finished.';
COMMENT ON TABLE reporting.backfill_items IS
  'Each window or full scan of a backfill and its state; the truth the Redis queue is re-filled from.';
