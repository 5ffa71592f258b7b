-- 005: indexes for what analysts and the sync ask most.
--
-- created_at: day ranges (exports, daily totals). (organization_id, created_at): one organisation's
-- period. reference: look-ups from support tickets. The partial "open" indexes hold only records not
-- yet in a final status: they stay small, and they back the revisit query (sync-log.ts nonFinalDays),
-- whose WHERE clause repeats their predicate exactly so the planner can use them.
CREATE INDEX payments_created_at_idx ON reporting.payments (created_at);
CREATE INDEX payments_org_created_at_idx ON reporting.payments (organization_id, created_at);
CREATE INDEX payments_reference_idx ON reporting.payments (reference);
CREATE INDEX payments_open_idx ON reporting.payments (source, created_at)
  WHERE status NOT IN ('COMPLETE', 'FAILED', 'TIMEOUT');

CREATE INDEX transfers_created_at_idx ON reporting.transfers (created_at);
CREATE INDEX transfers_org_created_at_idx ON reporting.transfers (organization_id, created_at);
CREATE INDEX transfers_reference_idx ON reporting.transfers (reference);
CREATE INDEX transfers_open_idx ON reporting.transfers (source, created_at)
  WHERE status NOT IN ('COMPLETE', 'FAILED');
