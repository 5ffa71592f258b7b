-- 013: what the transfers sync remembers of the service's transfer list, so that an oldest-first list
-- can be read from the page before its oldest unsettled transfer instead of from page 0.
--
-- The transfer list has no date filter and its order is an open point of the interface. Each read
-- writes, per transfer id it saw, the position it held in the list (0-based, in the order the service
-- served it) and when it was seen; a complete full scan then drops the ids it no longer saw, so the rows
-- of a source are the list as last read whole. `transfer_lists` keeps, per source, the order the reads
-- found and the page geometry the positions are counted in; the positions are only used while the
-- request page size is the same. Losing either table costs one full scan, never a record.
CREATE TABLE reporting.transfer_positions (
  source   text        NOT NULL,
  id       text        NOT NULL,
  position integer     NOT NULL,
  seen_at  timestamptz NOT NULL,
  PRIMARY KEY (source, id),
  CONSTRAINT transfer_positions_position CHECK (position >= 0)
);

CREATE TABLE reporting.transfer_lists (
  source            text        PRIMARY KEY,
  list_order        text        NOT NULL,
  page_size         integer     NOT NULL,
  served_size       integer     NOT NULL,
  anonymous         integer     NOT NULL DEFAULT 0,
  last_full_scan_at timestamptz,
  updated_at        timestamptz NOT NULL,
  CONSTRAINT transfer_lists_order CHECK (list_order IN ('newest-first', 'oldest-first', 'unknown')),
  CONSTRAINT transfer_lists_sizes CHECK (page_size > 0 AND served_size > 0)
);

COMMENT ON TABLE reporting.transfer_positions IS
  'Per source and transfer id: its position in the service''s transfer list at the last read that saw it.';
COMMENT ON TABLE reporting.transfer_lists IS
  'Per source: the transfer list''s order as read, the page geometry of the positions, the last full scan.';
