-- 022: what ops' signals read at every scrape, kept cheap however long the sync log grows.
--
-- sync_windows_first_fetched_idx: when paysync first read anything. A day that ended after that is one
-- the daily job should have published a pack of; /metrics counts those without one
-- (paysync_export_missing, src/ops/export-state.ts) from one index lookup, where min() over the sync
-- log would read every window of every day ever synced at each scrape.
CREATE INDEX sync_windows_first_fetched_idx ON reporting.sync_windows (first_fetched_at);
