-- 002: status history, one row per (record, status) the first time paysync sees that status.
--
-- The service shows no transitions, only the current status: the history is what we observed. updated_at
-- is the record's own updatedAt on the copy that first showed the status (the best estimate of when it
-- entered it); seen_at is when paysync saw it. Copies are recorded even when older than the stored row,
-- since an older copy still proves the record passed through that status.
CREATE TABLE reporting.payment_status_history (
  payment_id text        NOT NULL,
  status     text        NOT NULL,
  updated_at timestamptz NOT NULL,
  seen_at    timestamptz NOT NULL DEFAULT now(),
  source     text        NOT NULL,
  PRIMARY KEY (payment_id, status)
);

CREATE TABLE reporting.transfer_status_history (
  transfer_id text        NOT NULL,
  status      text        NOT NULL,
  updated_at  timestamptz NOT NULL,
  seen_at     timestamptz NOT NULL DEFAULT now(),
  source      text        NOT NULL,
  PRIMARY KEY (transfer_id, status)
);

COMMENT ON TABLE reporting.payment_status_history IS
  'Each status a payment was seen in, once, with the updatedAt of the first copy showing it.';
COMMENT ON TABLE reporting.transfer_status_history IS
  'Each status a transfer was seen in, once, with the updatedAt of the first copy showing it.';
