-- 020: finance's close of a day: sign-offs and their revocations, the published manifest's checksum,
-- and the first read of each sync window after it ended.
--
-- signoffs: one row per `paysync signoff --day D --by NAME`: who (NAME as given: who may run the
-- command is a matter of access to the CLI and the database), when, which version of the day's pack,
-- the SHA-256 of that version's own vN/manifest.json (which never changes) and its records digests.
-- signoff_revocations: one row per `paysync signoff --revoke`, naming the sign-off it withdraws; a
-- sign-off is revoked at most once. Both tables are append-only: a trigger refuses every UPDATE, DELETE
-- and TRUNCATE, whoever runs it (owner and superuser included), so the history of a close can only
-- grow; getting around it takes ALTER TABLE rights on the table (the owner's), which is a matter of
-- database access like the rest.
--
-- export_versions.manifest_sha256: the SHA-256 of each version's own manifest.json as published, so that
-- sign-off and verify can tell a manifest edited on disk from the one paysync wrote (NULL for versions
-- published before this column existed).
--
-- sync_windows.first_read_after_end: when a window was first read completely after it ended (NULL until
-- then). fetched_at keeps only the latest read, so without it the sync log could not show two reads of a
-- finished day: what the export asks before it calls a suspiciously empty day final (two reads at least
-- an hour apart, both after the day ended). Set once, by a trigger, so every writer of the sync log
-- keeps it the same way.
CREATE TABLE reporting.signoffs (
  signoff_id        bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  day               date        NOT NULL,
  version           integer     NOT NULL,
  signed_by         text        NOT NULL CHECK (signed_by <> ''),
  signed_at         timestamptz NOT NULL DEFAULT now(),
  note              text,
  manifest_sha256   text        NOT NULL CHECK (manifest_sha256 ~ '^[0-9a-f]{64}$'),
  payments_digest   text,
  transfers_digest  text,
  FOREIGN KEY (day, version) REFERENCES reporting.export_versions (day, version)
);
CREATE INDEX signoffs_day_idx ON reporting.signoffs (day, signoff_id DESC);

CREATE TABLE reporting.signoff_revocations (
  revocation_id bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  signoff_id    bigint      NOT NULL UNIQUE REFERENCES reporting.signoffs (signoff_id),
  revoked_by    text        NOT NULL CHECK (revoked_by <> ''),
  revoked_at    timestamptz NOT NULL DEFAULT now(),
  note          text        NOT NULL CHECK (note <> '')
);

CREATE FUNCTION reporting.refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '% is append-only: % refused (record a revocation with paysync signoff --revoke instead)',
    TG_TABLE_NAME, TG_OP USING ERRCODE = 'insufficient_privilege';
END $$;

CREATE TRIGGER signoffs_append_only BEFORE UPDATE OR DELETE ON reporting.signoffs
  FOR EACH ROW EXECUTE FUNCTION reporting.refuse_change();
CREATE TRIGGER signoffs_no_truncate BEFORE TRUNCATE ON reporting.signoffs
  FOR EACH STATEMENT EXECUTE FUNCTION reporting.refuse_change();
CREATE TRIGGER signoff_revocations_append_only BEFORE UPDATE OR DELETE ON reporting.signoff_revocations
  FOR EACH ROW EXECUTE FUNCTION reporting.refuse_change();
CREATE TRIGGER signoff_revocations_no_truncate BEFORE TRUNCATE ON reporting.signoff_revocations
  FOR EACH STATEMENT EXECUTE FUNCTION reporting.refuse_change();

ALTER TABLE reporting.export_versions ADD COLUMN manifest_sha256 text;

ALTER TABLE reporting.sync_windows ADD COLUMN first_read_after_end timestamptz;

CREATE FUNCTION reporting.note_first_read_after_end() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.first_read_after_end IS NULL AND NEW.outcome = 'complete' AND NEW.fetched_at >= NEW.window_end THEN
    NEW.first_read_after_end := NEW.fetched_at;
  END IF;
  RETURN NEW;
END $$;

CREATE TRIGGER sync_windows_first_read_after_end BEFORE INSERT OR UPDATE ON reporting.sync_windows
  FOR EACH ROW EXECUTE FUNCTION reporting.note_first_read_after_end();

COMMENT ON TABLE reporting.signoffs IS
  'Finance sign-offs of a day''s pack version (append-only): who, when, the version, its manifest SHA-256 and records digests.';
COMMENT ON TABLE reporting.signoff_revocations IS
  'Revocations of mistaken sign-offs (append-only): the sign-off withdrawn, who, when, why.';
COMMENT ON COLUMN reporting.sync_windows.first_read_after_end IS
  'When the window was first read completely after it ended (fetched_at holds the latest read).';
