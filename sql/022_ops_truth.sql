-- 022: what ops' signals read at every scrape, kept cheap however long the sync log grows.
--
-- sync_windows_failing_idx: the windows whose last run did not end complete, per source and stream, newest
-- first. `paysync status`, the status page and /metrics list the failing windows of every stream from
-- them at each look (src/ops/status-data.ts): a handful of rows, where a scan would read every window of
-- every day ever synced.
-- sync_windows_first_fetched_idx: when paysync first read anything. A day that ended after that is one
-- the daily job should have published a pack of; /metrics counts those without one
-- (paysync_export_missing, src/ops/export-state.ts) from one index lookup.
CREATE INDEX sync_windows_failing_idx ON reporting.sync_windows (source, stream, fetched_at DESC)
  WHERE outcome <> 'complete';
CREATE INDEX sync_windows_first_fetched_idx ON reporting.sync_windows (first_fetched_at);
