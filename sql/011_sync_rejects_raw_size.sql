-- 011: a reject's raw copy may be cut short; say so, with the whole record's size.
--
-- A hostile or broken service can send a record of tens of megabytes. sync_rejects keeps only the first
-- 64 KiB of such a record's text (raw_text), so the quarantine cannot be used to fill the disk; raw_hash
-- stays the SHA-256 of the whole text (the same record seen again is still one row), raw_bytes its full
-- size in UTF-8 bytes, and raw_truncated says that raw_text is only its beginning. Rows written before
-- this migration leave raw_bytes NULL (their raw copy is whole).
ALTER TABLE reporting.sync_rejects
  ADD COLUMN raw_bytes     bigint,
  ADD COLUMN raw_truncated boolean NOT NULL DEFAULT false;

COMMENT ON COLUMN reporting.sync_rejects.raw_bytes IS 'Size of the whole raw record in UTF-8 bytes.';
COMMENT ON COLUMN reporting.sync_rejects.raw_truncated IS
  'raw_text holds only the first 64 KiB characters of the record (raw_hash and raw_bytes are of the whole).';
