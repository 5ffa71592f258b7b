-- 022: what ops' signals read at every scrape, kept cheap however long the sync log grows.
--
-- sync_windows_first_fetched_idx: when paysync first read anything. A day that ended after that is one
-- the daily job should have published a pack of; /metrics counts those without one
-- (paysync_export_missing, src/ops/export-state.ts) from one index lookup, where min() over the sync
-- log would read every window of every day ever synced at each scrape.
CREATE INDEX sync_windows_first_fetched_idx ON reporting.sync_windows (first_fetched_at);
-- payments_first_seen_idx, transfers_first_seen_idx: the status page's "new records per hour" counts
-- the records first stored in the last 24 hours (each once, however often it is read again) from them,
-- at each look, where a scan would read every record ever synced.
CREATE INDEX payments_first_seen_idx ON reporting.payments (first_seen_at);
CREATE INDEX transfers_first_seen_idx ON reporting.transfers (first_seen_at);
