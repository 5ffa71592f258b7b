/**
 * The page statement for the schema of migrations 001-015 (every status seen, the first one included, a
 * row of the history table), kept as the oracle of test/ops/status-history.test.ts: the same pages through
 * it on a database migrated up to 015 and through the loader on a full one must give the same status
 * history and the same counts.
 */
import { incomingSql, REJECT_PARAMS } from '../../src/warehouse/page-sql.js';
import type { StreamTable } from '../../src/warehouse/stream-tables.js';

/**
 * The sync-log upsert as it was up to 015 (twelve parameters). The loader's parameters carry the columns
 * later migrations added after them: `later` gives them their types without writing them.
 */
function windowUpsertSql015(p: (k: number) => string): string {
  return `
  INSERT INTO reporting.sync_windows AS w (source, stream, window_start, window_end, kind, fetched_at,
    records, rejects, reported_total, pages, outcome, detail, first_fetched_at)
  SELECT ${p(1)}::text, ${p(2)}::text, ${p(3)}::timestamptz, ${p(4)}::timestamptz, ${p(5)}::text,
    ${p(6)}::timestamptz, ${p(7)}::int, ${p(8)}::int, ${p(9)}::int, ${p(10)}::int, ${p(11)}::text,
    ${p(12)}::text, ${p(6)}::timestamptz
  WHERE ${p(3)}::timestamptz IS NOT NULL
  ON CONFLICT (source, stream, window_start, window_end) DO UPDATE
    SET kind = CASE WHEN EXCLUDED.kind = 'backfill' AND w.kind <> 'backfill' THEN w.kind ELSE EXCLUDED.kind END,
        fetched_at = EXCLUDED.fetched_at, records = EXCLUDED.records,
        rejects = EXCLUDED.rejects, reported_total = EXCLUDED.reported_total, pages = EXCLUDED.pages,
        outcome = EXCLUDED.outcome, detail = EXCLUDED.detail, attempts = w.attempts + 1
  RETURNING 1),
later AS (SELECT ${p(13)}::text, ${p(14)}::int, ${p(15)}::text[], ${p(16)}::boolean`;
}

const list = (names: readonly string[], prefix = ''): string => names.map((n) => prefix + n).join(', ');

/** Columns added after 015 (sql/021's unknown_fields): sent with the page, not written by this statement. */
const LATER = new Set(['unknown_fields']);
const columnsOf = (table: StreamTable) => table.columns.filter((c) => !LATER.has(c.name));

function differs(table: StreamTable, left: string, right: string): string {
  const compared = columnsOf(table)
    .filter((c) => c.compared)
    .map((c) => c.name);
  return `(${list(compared, `${left}.`)}) IS DISTINCT FROM (${list(compared, `${right}.`)})`;
}

export function baselinePageSql(table: StreamTable): string {
  const incoming = incomingSql(table);
  const n = table.columns.length;
  const names = columnsOf(table).map((c) => c.name);
  const source = `$${n + 1}::text`;
  const stream = `$${n + 2}::text`;
  const r = (k: number) => `$${n + 2 + k}`; // reject arrays, k = 1…7
  const finals = `ARRAY[${table.finalStatuses.map((s) => `'${s}'`).join(', ')}]::text[]`;
  return `
WITH incoming AS (${incoming}),
classified AS (
  SELECT i.*, t.status AS old_status,
         CASE WHEN t.id IS NULL THEN 'inserted'
              WHEN i.updated_at > t.updated_at THEN 'updated'
              WHEN i.updated_at < t.updated_at THEN 'stale'
              WHEN ${differs(table, 'i', 't')} THEN 'updated'
              ELSE 'unchanged' END AS outcome
  -- One primary-key probe per incoming id. OFFSET 0 keeps the planner from turning this into a hash
  -- join over the whole table, which it prefers on young tables and which grows with the table.
  FROM incoming i LEFT JOIN LATERAL (
    SELECT * FROM ${table.table} s WHERE s.id = i.id OFFSET 0
  ) t ON true
),
written AS (
  INSERT INTO ${table.table} AS t (${list(names)}, source)
  SELECT ${list(names)}, ${source} FROM classified
  WHERE outcome IN ('inserted', 'updated') ORDER BY id
  ON CONFLICT (id) DO UPDATE SET ${names
    .filter((c) => c !== 'id')
    .map((c) => `${c} = EXCLUDED.${c}`)
    .join(', ')}, source = EXCLUDED.source, synced_at = now()
  WHERE EXCLUDED.updated_at > t.updated_at
     OR (EXCLUDED.updated_at = t.updated_at AND ${differs(table, 'EXCLUDED', 't')})
  RETURNING 1
),
touched AS (
  -- A transfer first loaded before its source's organisation was known gets it on the next sighting.
  UPDATE ${table.table} t SET synced_at = now(), organization_id = coalesce(t.organization_id, c.organization_id)
  FROM classified c WHERE c.id = t.id AND c.outcome IN ('unchanged', 'stale')
  RETURNING 1
),
history AS (
  INSERT INTO ${table.historyTable} (${table.historyKey}, status, updated_at, source)
  SELECT id, status, updated_at, ${source} FROM classified
  WHERE old_status IS DISTINCT FROM status ORDER BY id
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
windowed AS (${windowUpsertSql015((k) => `$${n + 2 + REJECT_PARAMS + k}`)})
SELECT count(*) FILTER (WHERE outcome = 'inserted')::int AS inserted,
       count(*) FILTER (WHERE outcome = 'updated')::int AS updated,
       count(*) FILTER (WHERE outcome = 'unchanged')::int AS unchanged,
       count(*) FILTER (WHERE outcome = 'stale')::int AS stale,
       coalesce(jsonb_agg(jsonb_build_object('id', id, 'from', old_status, 'to', status))
         FILTER (WHERE outcome = 'updated' AND old_status = ANY(${finals})
                 AND NOT status = ANY(${finals})), '[]'::jsonb) AS anomalies,
       (SELECT count(*) FROM resolved)::int AS resolved
FROM classified`;
}
