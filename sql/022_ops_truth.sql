-- 022: what ops' signals read at every scrape, kept cheap however long the sync log grows.
--
-- sync_windows_failing_idx: the windows whose last run did not end complete, per source and stream, newest
-- first. `paysync status`, the status page and /metrics list the failing windows of every stream from
-- them at each look (src/ops/status-data.ts): a handful of rows, where a scan would read every window of
-- every day ever synced.
CREATE INDEX sync_windows_failing_idx ON reporting.sync_windows (source, stream, fetched_at DESC)
  WHERE outcome <> 'complete';
