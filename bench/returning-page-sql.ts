/**
 * A variant of the page statement measured in bench/loader.ts and not kept: every copy goes through one
 * INSERT … ON CONFLICT that always updates a known id (each column takes the incoming value only when
 * the copy is newer), `RETURNING xmax = 0` tells which ids it inserted, and only the others are probed
 * for their stored version. It saves the per-id probe on a fresh table, but a re-read then locks and
 * rewrites every row through the conflict path and costs more than the probe saved (see README,
 * "PostgreSQL per row"). Same parameters and result as pageSql; writes sql/016's schema.
 */
import { incomingSql, REJECT_PARAMS, windowUpsertSql } from '../src/warehouse/page-sql.js';
import type { StreamTable } from '../src/warehouse/stream-tables.js';

const list = (names: readonly string[], prefix = ''): string => names.map((n) => prefix + n).join(', ');

function differs(table: StreamTable, left: string, right: string): string {
  const compared = table.columns.filter((c) => c.compared).map((c) => c.name);
  return `(${list(compared, `${left}.`)}) IS DISTINCT FROM (${list(compared, `${right}.`)})`;
}

export function returningPageSql(table: StreamTable, staging?: string): string {
  const incoming = staging ? `SELECT * FROM ${staging}` : incomingSql(table);
  const n = staging ? 0 : table.columns.length;
  const names = table.columns.map((c) => c.name);
  const source = `$${n + 1}::text`;
  const stream = `$${n + 2}::text`;
  const r = (k: number) => `$${n + 2 + k}`; // reject arrays, k = 1…7
  const finals = `ARRAY[${table.finalStatuses.map((s) => `'${s}'`).join(', ')}]::text[]`;
  const set = names.filter((c) => c !== 'id');
  const pick = (c: string) => `CASE WHEN x.newer THEN EXCLUDED.${c} ELSE t.${c} END`;
  const assigned = set.map((c) =>
    // A transfer first loaded before its source's organisation was known gets it on the next sighting.
    c === 'organization_id'
      ? `CASE WHEN x.newer THEN EXCLUDED.${c} ELSE coalesce(t.${c}, EXCLUDED.${c}) END`
      : pick(c),
  );
  const compared = table.columns.filter((c) => c.compared).map((c) => c.name);
  return `
WITH incoming AS (${incoming}),
written AS (
  INSERT INTO ${table.table} AS t (${list(names)}, source, first_status, first_status_updated_at, first_status_source)
  SELECT ${list(names)}, ${source}, status, updated_at, ${source} FROM incoming ORDER BY id
  ON CONFLICT (id) DO UPDATE SET (${list(set)}, source, synced_at) = (
    SELECT ${assigned.join(', ')}, ${pick('source')}, now()
    FROM (SELECT EXCLUDED.updated_at > t.updated_at
              OR (EXCLUDED.updated_at = t.updated_at AND ${differs(table, 'EXCLUDED', 't')}) AS newer) x)
  RETURNING t.id, t.xmax = 0 AS inserted, t.updated_at, t.first_status
),
stored AS (
  -- The version each copy met, for ids this statement did not insert: one primary-key probe each, in
  -- the statement's snapshot (before the upsert). OFFSET 0 keeps the planner from turning this into a
  -- hash join over the whole table. No stored row means a concurrent load inserted the id first.
  SELECT i.id, i.status, i.updated_at, w.first_status, s.status AS old_status,
         CASE WHEN s.id IS NULL THEN CASE WHEN w.updated_at > i.updated_at THEN 'stale' ELSE 'updated' END
              WHEN i.updated_at > s.updated_at THEN 'updated'
              WHEN i.updated_at < s.updated_at THEN 'stale'
              WHEN ${differs(table, 'i', 's')} THEN 'updated'
              ELSE 'unchanged' END AS outcome
  FROM incoming i JOIN written w ON w.id = i.id AND NOT w.inserted
  LEFT JOIN LATERAL (
    SELECT s.id, s.updated_at, ${list(compared, 's.')} FROM ${table.table} s WHERE s.id = i.id OFFSET 0
  ) s ON true
),
history AS (
  -- A status the record was not seen in before: neither its stored status nor its first one (a row of
  -- ${table.changesTable} already holding it is kept: the first sighting stays). Older copies count
  -- too: they still prove the record passed through that status.
  INSERT INTO ${table.changesTable} (${table.historyKey}, status, updated_at, source)
  SELECT id, status, updated_at, ${source} FROM stored
  WHERE old_status IS DISTINCT FROM status AND first_status IS DISTINCT FROM status ORDER BY id
  ON CONFLICT DO NOTHING
  RETURNING 1
),
rejected AS (
  INSERT INTO reporting.sync_rejects AS r
    (source, stream, record_id, raw, raw_text, raw_hash, reason, raw_bytes, raw_truncated)
  SELECT ${source}, ${stream}, x.record_id, x.raw, x.raw_text, x.raw_hash, x.reason, x.raw_bytes, x.raw_truncated
  FROM unnest(${r(1)}::text[], ${r(2)}::jsonb[], ${r(3)}::text[], ${r(4)}::text[], ${r(5)}::text[],
              ${r(6)}::bigint[], ${r(7)}::boolean[])
       AS x(record_id, raw, raw_text, raw_hash, reason, raw_bytes, raw_truncated)
  ON CONFLICT (source, stream, raw_hash) DO UPDATE
    SET last_seen_at = now(), times_seen = r.times_seen + 1, reason = EXCLUDED.reason
  RETURNING 1
),
resolved AS (
  UPDATE reporting.sync_rejects r SET resolved_at = now()
  FROM incoming i
  WHERE r.source = ${source} AND r.stream = ${stream} AND r.record_id = i.id
    AND r.resolved_at IS NULL AND r.raw_hash <> ALL(${r(4)}::text[])
  RETURNING 1
),
windowed AS (${windowUpsertSql((k) => `$${n + 2 + REJECT_PARAMS + k}`, true)})
SELECT (SELECT count(*) FROM written WHERE inserted)::int AS inserted,
       count(*) FILTER (WHERE outcome = 'updated')::int AS updated,
       count(*) FILTER (WHERE outcome = 'unchanged')::int AS unchanged,
       count(*) FILTER (WHERE outcome = 'stale')::int AS stale,
       coalesce(jsonb_agg(jsonb_build_object('id', id, 'from', old_status, 'to', status))
         FILTER (WHERE outcome = 'updated' AND old_status = ANY(${finals})
                 AND NOT status = ANY(${finals})), '[]'::jsonb) AS anomalies,
       (SELECT count(*) FROM resolved)::int AS resolved
FROM stored`;
}
