-- 019: the trace of a backfill. With tracing on (OpenTelemetry, docs/operations.md#tracing),
-- `paysync backfill` records its backfill inside a span (`create sync`) and keeps that span's W3C
-- traceparent here. Every item's job carries it, and the span of each window's run links to it: the
-- queue is re-filled from these rows after Redis lost its data (principle 4), so a backfill's windows
-- stay linked to the span that asked for them however often Redis is emptied, hours or days later.
-- NULL when the backfill was recorded with tracing off.
ALTER TABLE reporting.backfills
  ADD COLUMN trace_parent text
    CONSTRAINT backfills_trace_parent CHECK (trace_parent ~ '^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$');

COMMENT ON COLUMN reporting.backfills.trace_parent IS
  'W3C traceparent of the span that recorded the backfill (tracing on), which each window''s span links to.';
