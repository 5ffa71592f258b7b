-- 003: records the service sent that failed validation: quarantined with the reason, never dropped.
--
-- The same bad record comes back on every lookback re-read, so a reject is keyed by a hash of its raw
-- text: a re-sighting bumps last_seen_at and times_seen instead of adding rows. raw holds the record as
-- JSONB; raw_text holds it when it is not storable as JSONB (not JSON, or a \u0000 escape JSONB refuses).
-- resolved_at is set when a valid copy of the same id is later loaded.
CREATE TABLE reporting.sync_rejects (
  reject_id     bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  source        text        NOT NULL,
  stream        text        NOT NULL,
  record_id     text,
  raw           jsonb,
  raw_text      text,
  raw_hash      text        NOT NULL,
  reason        text        NOT NULL,
  first_seen_at timestamptz NOT NULL DEFAULT now(),
  last_seen_at  timestamptz NOT NULL DEFAULT now(),
  times_seen    integer     NOT NULL DEFAULT 1,
  resolved_at   timestamptz,
  CONSTRAINT sync_rejects_raw_present CHECK (raw IS NOT NULL OR raw_text IS NOT NULL),
  CONSTRAINT sync_rejects_once UNIQUE (source, stream, raw_hash)
);

-- Resolving looks rejects up by record id when a valid copy arrives; only open ones matter.
CREATE INDEX sync_rejects_open_record_idx
  ON reporting.sync_rejects (source, stream, record_id)
  WHERE resolved_at IS NULL;

COMMENT ON TABLE reporting.sync_rejects IS
  'Records that failed validation, kept raw with the reason; resolved_at set once a valid copy loaded.';
