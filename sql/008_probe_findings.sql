-- 008: what each `paysync probe` measured about the service's open points, one row per probe.
--
-- The latest findings also live in Redis (`<prefix>:probe:<source>`) for the worker; this table is the
-- durable history, so a change in how the service answers (a new page cap, a reversed ordering) stays
-- visible with its date after Redis is flushed. `changes` lists the findings that differ from the
-- previous probe of the same source (empty array on the first probe or when nothing changed).
CREATE TABLE reporting.probe_findings (
  source    text        NOT NULL,
  probed_at timestamptz NOT NULL,
  findings  jsonb       NOT NULL,
  changes   jsonb       NOT NULL DEFAULT '[]'::jsonb,
  PRIMARY KEY (source, probed_at),
  CONSTRAINT probe_findings_object CHECK (jsonb_typeof(findings) = 'object'),
  CONSTRAINT probe_changes_array CHECK (jsonb_typeof(changes) = 'array')
);

COMMENT ON TABLE reporting.probe_findings IS
  'One row per paysync probe: measured answers to the interface''s open points, and what changed since the previous probe.';
