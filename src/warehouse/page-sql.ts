/**
 * The one statement that loads a page. Data-modifying CTEs make it atomic on its own (one round trip,
 * no BEGIN/COMMIT): rows, status history, rejects, resolved rejects and the optional window row commit
 * together or not at all.
 *
 * How a row moves only forward: `classified` compares each incoming copy with the stored row (the
 * statement's snapshot) to count outcomes; the ON CONFLICT … WHERE guard repeats the test against the
 * row as it is at write time, so even a concurrent load cannot make an older copy win. Unchanged and
 * stale copies only get synced_at bumped (a HOT update: no indexed column changes).
 *
 * Status history (sql/016): a new record's status is written on its own row as its first status; only
 * a status seen after that gets a row in the changes table. The views give one row per status seen.
 *
 * Built from the constant column lists of stream-tables.ts; every value is a parameter.
 */
import type { StreamTable } from './stream-tables.js';

/** Parameter numbers after the column arrays ($1…$n). */
export const REJECT_PARAMS = 7; // record_id, raw, raw_text, raw_hash, reason, raw_bytes, raw_truncated
export const WINDOW_PARAMS = 16;

const list = (names: readonly string[], prefix = ''): string => names.map((n) => prefix + n).join(', ');

/**
 * The page's rows from its column parameters, zipped row by row: an array literal per column
 * (`unnest($1::text[])`), but a `json` column (unknown_fields) as one JSON array (`json_array_elements`,
 * each element's text exactly as sent), its JSON `null` a row without unknown fields (SQL NULL; a stored
 * value is never the text `null`), and the parameter itself NULL when no row has any (ROWS FROM pads a
 * function that ends early with NULLs). An array literal of JSON texts would have every quote escaped by
 * the worker; PostgreSQL reads either form in about the same time (docs/benchmarks.md, "Unknown fields
 * and the key check"). array-literal.ts builds the parameters.
 */
export function incomingSql(table: StreamTable): string {
  const sources = table.columns
    .map((c, i) =>
      c.type === 'json' ? `json_array_elements($${i + 1}::json)` : `unnest($${i + 1}::${c.type}[])`,
    )
    .join(', ');
  const selected = table.columns
    .map((c) =>
      c.type === 'json'
        ? `CASE WHEN i.${c.name}::text <> 'null' THEN i.${c.name} END AS ${c.name}`
        : `i.${c.name}`,
    )
    .join(', ');
  return `SELECT ${selected} FROM ROWS FROM (${sources}) AS i(${list(table.columns.map((c) => c.name))})`;
}

function differs(table: StreamTable, left: string, right: string): string {
  const compared = table.columns.filter((c) => c.compared);
  // json has no equality operator: its text is compared (it keeps the text it was given)
  const side = (s: string) =>
    compared.map((c) => (c.type === 'json' ? `${s}.${c.name}::text` : `${s}.${c.name}`)).join(', ');
  return `(${side(left)}) IS DISTINCT FROM (${side(right)})`;
}

/** What both page statements share: their parameters' places and the statuses that are final. */
interface PageParts {
  incoming: string;
  /** Columns sent as array parameters ($1…$n; 0 when the rows come from a staging table). */
  n: number;
  names: string[];
  source: string;
  stream: string;
  finals: string;
}

function pageParts(table: StreamTable, staging?: string): PageParts {
  const n = staging ? 0 : table.columns.length;
  return {
    incoming: staging ? `SELECT * FROM ${staging}` : incomingSql(table),
    n,
    names: table.columns.map((c) => c.name),
    source: `$${n + 1}::text`,
    stream: `$${n + 2}::text`,
    finals: `ARRAY[${table.finalStatuses.map((s) => `'${s}'`).join(', ')}]::text[]`,
  };
}

/**
 * The page's rejects (upserted by raw hash), the rejects a valid copy of their record now resolves, and
 * the window's sync-log row: the CTEs both page statements end with.
 *
 * A reject's life: open while the service lists it; resolved once a valid copy of its record loads
 * without it; listed again after that, open again (`resolved_at` cleared, the one rule every reader of
 * open rejects follows). `first_seen_at` stays its first sighting and `times_seen` counts every listing
 * across resolutions, so a reject open again is never counted as a new one (field_sightings, the status
 * history's rejects per hour). The two CTEs never touch one row: `resolved` skips the page's own rejects.
 */
function rejectsAndWindowSql({ n, source, stream }: PageParts): string {
  const r = (k: number) => `$${n + 2 + k}`; // reject arrays, k = 1…7
  return `rejected AS (
  INSERT INTO reporting.sync_rejects AS r
    (source, stream, record_id, raw, raw_text, raw_hash, reason, raw_bytes, raw_truncated)
  SELECT ${source}, ${stream}, x.record_id, x.raw, x.raw_text, x.raw_hash, x.reason, x.raw_bytes, x.raw_truncated
  FROM unnest(${r(1)}::text[], ${r(2)}::jsonb[], ${r(3)}::text[], ${r(4)}::text[], ${r(5)}::text[],
              ${r(6)}::bigint[], ${r(7)}::boolean[])
       AS x(record_id, raw, raw_text, raw_hash, reason, raw_bytes, raw_truncated)
  ON CONFLICT (source, stream, raw_hash) DO UPDATE
    SET last_seen_at = now(), times_seen = r.times_seen + 1, reason = EXCLUDED.reason, resolved_at = NULL
  RETURNING 1
),
resolved AS (
  UPDATE reporting.sync_rejects r SET resolved_at = now()
  FROM incoming i
  WHERE r.source = ${source} AND r.stream = ${stream} AND r.record_id = i.id
    AND r.resolved_at IS NULL AND r.raw_hash <> ALL(${r(4)}::text[])
  RETURNING 1
),
windowed AS (${windowUpsertSql((k) => `$${n + 2 + REJECT_PARAMS + k}`, true)})`;
}

/**
 * The row both page statements return: outcomes counted over `rows` (the copies with their `outcome`,
 * `old_status` and `status`), final → non-final moves listed, rejects resolved. `inserted` is how the
 * statement tells inserted ids.
 */
function countsSql(inserted: string, rows: string, finals: string): string {
  return `SELECT ${inserted}::int AS inserted,
       count(*) FILTER (WHERE outcome = 'updated')::int AS updated,
       count(*) FILTER (WHERE outcome = 'unchanged')::int AS unchanged,
       count(*) FILTER (WHERE outcome = 'stale')::int AS stale,
       coalesce(jsonb_agg(jsonb_build_object('id', id, 'from', old_status, 'to', status))
         FILTER (WHERE outcome = 'updated' AND old_status = ANY(${finals})
                 AND NOT status = ANY(${finals})), '[]'::jsonb) AS anomalies,
       (SELECT count(*) FROM resolved)::int AS resolved
FROM ${rows}`;
}

/**
 * `staging` names a table holding the page (COPY into a staging table: measured and not used, see
 * docs/benchmarks.md "PostgreSQL per row"); without it the page
 * comes as one array parameter per column ($1…$n), and the other parameters follow.
 */
export function pageSql(table: StreamTable, staging?: string): string {
  const p = pageParts(table, staging);
  const { incoming, names, source, finals } = p;
  return `
WITH incoming AS (${incoming}),
classified AS (
  SELECT i.*, t.status AS old_status, t.first_status AS old_first_status,
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
  -- A new record's status is its first status, kept on its row (sql/016): no history row for it.
  INSERT INTO ${table.table} AS t (${list(names)}, source, first_status, first_status_updated_at, first_status_source)
  SELECT ${list(names)}, ${source}, status, updated_at, ${source} FROM classified
  WHERE outcome IN ('inserted', 'updated') ORDER BY id
  ON CONFLICT (id) DO UPDATE SET ${names
    .filter((c) => c !== 'id')
    .map((c) => `${c} = EXCLUDED.${c}`)
    .join(', ')}, source = EXCLUDED.source, synced_at = now()
  WHERE EXCLUDED.updated_at > t.updated_at
     OR (EXCLUDED.updated_at = t.updated_at AND ${differs(table, 'EXCLUDED', 't')})
  RETURNING t.id, t.xmax = 0 AS inserted, t.first_status
),
touched AS (
  -- A transfer first loaded before its source's organisation was known gets it on the next sighting.
  UPDATE ${table.table} t SET synced_at = now(), organization_id = coalesce(t.organization_id, c.organization_id)
  FROM classified c WHERE c.id = t.id AND c.outcome IN ('unchanged', 'stale')
  RETURNING 1
),
history AS (
  -- A status the record was not seen in before: neither its stored status nor its first one (a row
  -- already holding it is kept: the first sighting stays). Older copies count too: they still prove the
  -- record passed through that status. An id this statement meant to insert but a concurrent load
  -- inserted first is checked against the first status that load stored.
  INSERT INTO ${table.changesTable} (${table.historyKey}, status, updated_at, source)
  SELECT c.id, c.status, c.updated_at, ${source}
  FROM classified c LEFT JOIN written w ON w.id = c.id
  WHERE CASE WHEN c.outcome = 'inserted'
             THEN w.inserted IS NOT TRUE AND w.first_status IS DISTINCT FROM c.status
             ELSE c.old_status IS DISTINCT FROM c.status AND c.old_first_status IS DISTINCT FROM c.status END
  ORDER BY c.id
  ON CONFLICT DO NOTHING
  RETURNING 1
),
${rejectsAndWindowSql(p)}
${countsSql("count(*) FILTER (WHERE outcome = 'inserted')", 'classified', finals)}`;
}

/**
 * The statement for pages of mostly new records (a backfill of days never loaded): every copy goes
 * through one INSERT … ON CONFLICT, which inserts a new id with its first status on its row and always
 * updates a known one, each content column taking the incoming value only when the copy is newer (a
 * later updated_at, or the same one with different content: the test is made once per row, against the
 * row as it is at write time, so a concurrent load cannot make an older copy win; otherwise only
 * synced_at moves, a HOT update). `RETURNING xmax = 0` tells which ids it inserted; only the others are
 * looked up in the statement's snapshot (`stored`) to count outcomes and record a status not seen
 * before. No per-id probe for new records; but a known id is locked and rewritten through the conflict
 * path, dearer than pageSql's probe for a page of known ids (docs/benchmarks.md, "PostgreSQL per row"). Same
 * parameters and result columns as pageSql.
 */
export function newRecordsPageSql(table: StreamTable, staging?: string): string {
  const p = pageParts(table, staging);
  const { incoming, names, source, finals } = p;
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
${rejectsAndWindowSql(p)}
${countsSql('(SELECT count(*) FROM written WHERE inserted)', 'stored', finals)}`;
}

/**
 * Upsert of one sync_windows row: one row per (source, stream, window), updated on each run with the
 * latest outcome; attempts counts the runs. With `optional`, nothing is written when the start is NULL.
 * A live or revisit window stays so when a backfill re-reads the same day: the checkpoint rebuild counts
 * only live windows (a backfill never moves the checkpoint), and a backfill must not erase that evidence.
 * `failures` counts the consecutive runs that failed for a reason blocking the day ($16, from
 * src/sync/window-reasons.ts): an outage leaves it as it was, a complete run resets it (sql/018).
 */
export function windowUpsertSql(p: (k: number) => string, optional = false): string {
  const failed = `${p(11)}::text <> 'complete' AND ${p(16)}::boolean`;
  return `
  INSERT INTO reporting.sync_windows AS w (source, stream, window_start, window_end, kind, fetched_at,
    records, rejects, reported_total, pages, outcome, detail, first_fetched_at,
    reason_code, duplicates, anomalies, failures)
  SELECT ${p(1)}::text, ${p(2)}::text, ${p(3)}::timestamptz, ${p(4)}::timestamptz, ${p(5)}::text,
    ${p(6)}::timestamptz, ${p(7)}::int, ${p(8)}::int, ${p(9)}::bigint, ${p(10)}::int, ${p(11)}::text,
    ${p(12)}::text, ${p(6)}::timestamptz, ${p(13)}::text, ${p(14)}::int, ${p(15)}::text[],
    CASE WHEN ${failed} THEN 1 ELSE 0 END
  ${optional ? `WHERE ${p(3)}::timestamptz IS NOT NULL` : ''}
  ON CONFLICT (source, stream, window_start, window_end) DO UPDATE
    SET kind = CASE WHEN EXCLUDED.kind = 'backfill' AND w.kind <> 'backfill' THEN w.kind ELSE EXCLUDED.kind END,
        fetched_at = EXCLUDED.fetched_at, records = EXCLUDED.records,
        rejects = EXCLUDED.rejects, reported_total = EXCLUDED.reported_total, pages = EXCLUDED.pages,
        outcome = EXCLUDED.outcome, detail = EXCLUDED.detail, attempts = w.attempts + 1,
        reason_code = EXCLUDED.reason_code, duplicates = EXCLUDED.duplicates, anomalies = EXCLUDED.anomalies,
        failures = CASE WHEN EXCLUDED.outcome = 'complete' THEN 0
                        WHEN ${failed} THEN w.failures + 1 ELSE w.failures END
  RETURNING 1`;
}
