-- 007: what the reconciliation pack and `paysync reconcile` record.
--
-- export_versions: one row per published version of a day's pack (the files on disk are the pack; this is
-- its ledger, for analysts and for the daily restatement check). export_snapshot: the (id, status, amount,
-- updated_at) of every record in the day's latest published version, so that a restatement can list what
-- changed since (records added or removed, status or amount changes, old and new) and so that the daily
-- job can find the days whose records changed without writing their files again.
-- reconcile_results: every `paysync reconcile` comparison, one row per source × stream × status.
CREATE TABLE reporting.export_versions (
  day          date        NOT NULL,
  version      integer     NOT NULL,
  time_zone    text        NOT NULL,
  generated_at timestamptz NOT NULL,
  final        boolean     NOT NULL,
  payments     integer     NOT NULL,
  transfers    integer     NOT NULL,
  manifest     jsonb       NOT NULL,
  PRIMARY KEY (day, version)
);

CREATE TABLE reporting.export_snapshot (
  day        date        NOT NULL,
  stream     text        NOT NULL,
  id         text        NOT NULL,
  status     text        NOT NULL,
  amount     numeric     NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (day, stream, id)
);

CREATE TABLE reporting.reconcile_results (
  run_id           uuid        NOT NULL,
  day              date        NOT NULL,
  checked_at       timestamptz NOT NULL DEFAULT now(),
  source           text        NOT NULL,
  stream           text        NOT NULL,
  status           text        NOT NULL,
  service          integer     NOT NULL,
  warehouse        integer     NOT NULL,
  difference       integer     NOT NULL,
  service_amount   numeric,
  warehouse_amount numeric,
  method           text        NOT NULL,
  PRIMARY KEY (run_id, source, stream, status)
);

CREATE INDEX reconcile_results_day_idx ON reporting.reconcile_results (day, checked_at DESC);

COMMENT ON TABLE reporting.export_versions IS
  'Published versions of each day''s reconciliation pack (files under EXPORT_DIR/YYYY-MM-DD/vN/).';
COMMENT ON TABLE reporting.export_snapshot IS
  'Per day and stream, the records of the latest published pack version (to list restatement changes).';
COMMENT ON TABLE reporting.reconcile_results IS
  'Each reconcile run: service vs warehouse counts per source, stream and status for one local day.';
