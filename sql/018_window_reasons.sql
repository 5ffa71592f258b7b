-- 018: why a window is not complete, as a code ops can count, and what odd things the service did.
--
-- Every run of a window ends complete on evidence, or incomplete/failed with a reason: `reason_code` is a
-- code of the one table in src/sync/window-reasons.ts (what it means, what ops should do, whether it is
-- an outage), `detail` the human text with the numbers. A complete window has no reason code (checked).
-- Rows recorded before this migration that were not complete get UNCLASSIFIED: their detail says why,
-- and the next run of the window records its reason. A trigger keeps the rule for every writer of the
-- sync log: a row written not complete without a code gets UNCLASSIFIED, a complete one loses its code.
--
-- failures: consecutive runs of the window that failed for a reason that counts towards BLOCKED_AFTER
-- (outages do not: a day is not to blame for the service being down); reset by a complete run. A day
-- whose window reaches BLOCKED_AFTER is shown `blocked` with its reasons.
-- duplicates: copies beyond the first of records the service listed more than once in the window (two
-- reads agreed on them: evidence, not a failure).
-- anomalies: codes of the notes of the window's last run (DUPLICATES_LISTED, IMPOSSIBLE_TOTAL, …).
-- reported_total becomes bigint: the service's `total` is checked before it is written, but a split
-- window's total is the sum of its parts', and no figure the service sends may fail the write.
ALTER TABLE reporting.sync_windows
  ADD COLUMN reason_code text,
  ADD COLUMN failures    integer NOT NULL DEFAULT 0,
  ADD COLUMN duplicates  integer NOT NULL DEFAULT 0,
  ADD COLUMN anomalies   text[]  NOT NULL DEFAULT '{}',
  ALTER COLUMN reported_total TYPE bigint;

UPDATE reporting.sync_windows SET reason_code = 'UNCLASSIFIED' WHERE outcome <> 'complete';

CREATE FUNCTION reporting.note_window_reason() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.outcome = 'complete' THEN
    NEW.reason_code := NULL;
  ELSIF NEW.reason_code IS NULL THEN
    NEW.reason_code := 'UNCLASSIFIED';
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER sync_windows_reason BEFORE INSERT OR UPDATE ON reporting.sync_windows
  FOR EACH ROW EXECUTE FUNCTION reporting.note_window_reason();

ALTER TABLE reporting.sync_windows
  ADD CONSTRAINT sync_windows_reason CHECK ((outcome = 'complete') = (reason_code IS NULL)),
  ADD CONSTRAINT sync_windows_reason_shape CHECK (reason_code ~ '^[A-Z][A-Z_]*$'),
  ADD CONSTRAINT sync_windows_counts CHECK (failures >= 0 AND duplicates >= 0);

-- status and the status page read the latest failing windows of each source and stream.
CREATE INDEX sync_windows_failing_idx ON reporting.sync_windows (source, stream, fetched_at DESC)
  WHERE outcome <> 'complete';

COMMENT ON COLUMN reporting.sync_windows.reason_code IS
  'Why the last run was not complete: a code of src/sync/window-reasons.ts (docs/operations.md lists them); NULL when complete.';
COMMENT ON COLUMN reporting.sync_windows.failures IS
  'Consecutive runs that failed for a reason counting towards BLOCKED_AFTER (outages do not); 0 after a complete run.';
COMMENT ON COLUMN reporting.sync_windows.duplicates IS
  'Copies beyond the first of records listed more than once in the window, confirmed by two reads.';
COMMENT ON COLUMN reporting.sync_windows.anomalies IS
  'Codes of the anomalies the last run noted (src/sync/window-reasons.ts, severity note).';
