-- 015: what healing a reconcile needs.
--
-- missing_at_source_since: set on a warehouse record when a healing reconcile finds the service no longer
-- lists it for its day. Healing never deletes or rewrites such a record (finance must see it, not lose
-- it): it is flagged, kept and reported; the flag is cleared when the service lists it again.
-- reconcile_leases: one reconcile (with its re-reads) per day at a time across every paysync process. A
-- row, not a session advisory lock, so that it holds through PgBouncer's transaction pooling; it expires
-- on its own when its holder dies (the holder renews it while it works).
ALTER TABLE reporting.payments ADD COLUMN missing_at_source_since timestamptz;
ALTER TABLE reporting.transfers ADD COLUMN missing_at_source_since timestamptz;
COMMENT ON COLUMN reporting.payments.missing_at_source_since IS
  'When a healing reconcile first found the service no longer listing this payment for its day (NULL: listed). Kept, never deleted.';
COMMENT ON COLUMN reporting.transfers.missing_at_source_since IS
  'When a healing reconcile first found the service no longer listing this transfer (NULL: listed). Kept, never deleted.';

CREATE TABLE reporting.reconcile_leases (
  day        date        PRIMARY KEY,
  holder     text        NOT NULL,
  acquired_at timestamptz NOT NULL DEFAULT now(),
  expires_at timestamptz NOT NULL
);
COMMENT ON TABLE reporting.reconcile_leases IS
  'The reconcile running for each day (one at a time across workers); a lease past expires_at is free.';
