/**
 * Loads pages of validated records into the warehouse: one statement per page (see page-sql.ts), so a
 * page's rows, status history, rejects and optional window row commit together or not at all, and
 * replaying a page is harmless (upsert on id that only moves forward). Of page-sql.ts's two statements
 * (same writes, same counts) each page gets the one cheaper for what the previous page held: mostly new
 * records, or records already stored.
 */
import type pg from 'pg';
import { silentLogger, type Logger } from '../log.js';
import { parseExactJson } from '../upstream/exact-json.js';
import type { Payment, RejectedRecord, Transfer } from '../upstream/schemas.js';
import { deduplicate, rejectRow, uniqueRejects, unstorableReason } from './page-prep.js';
import { columnParams } from './array-literal.js';
import { ECHOED_KEY_REASON, scrubEchoedKey } from './echoed-key.js';
import { driftEntries, recordFieldDrift } from './field-sightings.js';
import { loadIsolating, type Statement, type StatementOutcome } from './isolate.js';
import type { LoadResult, PageLoad, SyncWindowRow } from '../sync/ports.js';
import { newRecordsPageSql, pageSql, WINDOW_PARAMS, windowUpsertSql } from './page-sql.js';
import {
  jsonColumnIndex,
  unknownFieldsIndex,
  paymentRow,
  tableFor,
  transferRow,
  type Row,
  type StreamTable,
} from './stream-tables.js';

export interface PreparedPage {
  table: StreamTable;
  rows: Row[];
  /** The record each row came from (same order as rows): a row PostgreSQL refuses is quarantined raw. */
  records: Array<Payment | Transfer>;
  rejects: RejectedRecord[];
  /** Records of the page that became rejects here (same-updatedAt conflicts, unstorable rows). */
  rejectedHere: number;
  /** Records that echoed the API key and are stored scrubbed (also noted in `rejects`). */
  echoedKept: number;
}

/** A validated record as the service sent it: its known fields, then the ones the interface does not list. */
function asSent({ unknownFields, ...known }: Payment | Transfer): object {
  return unknownFields === undefined ? known : { ...known, ...(parseExactJson(unknownFields) as object) };
}

/**
 * Deduplicated rows in id order, plus the rejects (given, conflicting, unstorable, and the records that
 * echoed the API key: stored scrubbed and noted, or only quarantined when the key is in their id). Pure
 * but for the keys this process registered (src/scrub.ts).
 */
export function preparePage(page: PageLoad): PreparedPage {
  const table = tableFor(page.stream);
  const { records, conflicting } = deduplicate<Payment | Transfer>(page.records);
  const jsonIndex = jsonColumnIndex(table);
  const unknownIndex = unknownFieldsIndex(table);
  const rows: Row[] = [];
  const kept: Array<Payment | Transfer> = [];
  const rejects = [...page.rejects, ...conflicting];
  let echoedKept = 0;
  for (const record of records) {
    const row =
      page.stream === 'payments'
        ? paymentRow(record as Payment)
        : transferRow(record as Transfer, page.organizationId);
    const echoed = scrubEchoedKey(row, table);
    if (echoed) {
      rejects.push({ raw: asSent(record), reason: ECHOED_KEY_REASON, id: record.id });
      if (row[0] !== record.id) continue; // the key is in its id: quarantined only
    }
    const reason = unstorableReason(row, jsonIndex, unknownIndex);
    if (reason === null) {
      rows.push(row);
      kept.push(record);
      if (echoed) echoedKept++;
    } else rejects.push({ raw: asSent(record), reason, id: record.id });
  }
  const rejectedHere = rejects.length - page.rejects.length - echoedKept;
  return { table, rows, records: kept, rejects, rejectedHere, echoedKept };
}

function windowParams(row: SyncWindowRow | undefined): unknown[] {
  if (!row) return new Array(WINDOW_PARAMS).fill(null);
  return [
    row.source,
    row.stream,
    row.windowStart,
    row.windowEnd,
    row.kind,
    row.fetchedAt,
    row.records,
    row.rejects,
    row.reportedTotal,
    row.pages,
    row.outcome,
    row.detail ?? null,
    row.outcome === 'complete' ? null : (row.reasonCode ?? 'INTERNAL_ERROR'),
    row.duplicates ?? 0,
    row.anomalies ?? [],
    row.blocksDay ?? row.outcome !== 'complete',
  ];
}

function statementParams(page: PageLoad, table: StreamTable, part: Statement, withColumns = true): unknown[] {
  const rejects = uniqueRejects(part.rejects);
  return [
    ...(withColumns ? columnParams(part.rows, table.columns) : []),
    page.source,
    page.stream,
    rejects.map((r) => r.recordId),
    rejects.map((r) => r.rawJson),
    rejects.map((r) => r.rawText),
    rejects.map((r) => r.rawHash),
    rejects.map((r) => r.reason),
    rejects.map((r) => r.rawBytes),
    rejects.map((r) => r.truncated),
    ...windowParams(part.window),
  ];
}

/** Parameters of pageSql; without the column arrays when the rows travel by COPY instead. */
export function pageParams(page: PageLoad, prepared: PreparedPage, withColumns = true): unknown[] {
  const part: Statement = {
    rows: prepared.rows,
    records: prepared.records,
    rejects: prepared.rejects.map(rejectRow),
    window: page.window,
  };
  return statementParams(page, prepared.table, part, withColumns);
}

type PageOutcome = StatementOutcome;

const sqlCache = new Map<string, string>();
const sqlFor = (table: StreamTable, mostlyNew: boolean): string => {
  const key = `${table.table} ${mostlyNew}`;
  const cached = sqlCache.get(key) ?? (mostlyNew ? newRecordsPageSql(table) : pageSql(table));
  sqlCache.set(key, cached);
  return cached;
};

/**
 * Which of the two page statements (page-sql.ts) suits the next page of a source's stream: both store
 * and count the same; one is cheaper on new records (a backfill), the other on records already stored
 * (a re-read). Guessed from the previous page of the same source and stream: mostly inserted, or not.
 * A wrong guess costs time, never correctness. Starts with "new".
 */
const lastPageMostlyNew = new WeakMap<pg.Pool, Map<string, boolean>>();
function guessMostlyNew(pool: pg.Pool, page: PageLoad): boolean {
  return lastPageMostlyNew.get(pool)?.get(`${page.source}\u0000${page.stream}`) ?? true;
}
function rememberMostlyNew(pool: pg.Pool, page: PageLoad, outcome: StatementOutcome): void {
  const seen = outcome.inserted + outcome.updated + outcome.unchanged + outcome.stale;
  if (seen === 0) return;
  const bySource = lastPageMostlyNew.get(pool) ?? new Map<string, boolean>();
  lastPageMostlyNew.set(pool, bySource);
  bySource.set(`${page.source}\u0000${page.stream}`, outcome.inserted * 2 >= seen);
}

export async function loadPage(
  pool: pg.Pool,
  page: PageLoad,
  log: Logger = silentLogger,
): Promise<LoadResult> {
  const prepared = preparePage(page);
  if (prepared.rows.length === 0 && prepared.rejects.length === 0 && !page.window) {
    return { inserted: 0, updated: 0, unchanged: 0, stale: 0, rejects: 0, anomalies: 0 };
  }
  const sql = sqlFor(prepared.table, guessMostlyNew(pool, page));
  const run = (part: Statement) =>
    pool
      .query<PageOutcome>(sql, statementParams(page, prepared.table, part))
      .then((r) => r.rows[0] as PageOutcome);
  const whole: Statement = {
    rows: prepared.rows,
    records: prepared.records,
    rejects: prepared.rejects.map(rejectRow),
    window: page.window,
  };
  const { outcome, refused } = await loadIsolating(run, whole);
  rememberMostlyNew(pool, page, outcome);
  if (prepared.rejects.some((r) => r.drift !== undefined))
    await announceDrift(pool, page, prepared, whole, log);
  report(page, prepared, outcome, refused, log);
  return {
    inserted: outcome.inserted,
    updated: outcome.updated,
    unchanged: outcome.unchanged,
    stale: outcome.stale,
    rejects: prepared.rejects.length - prepared.echoedKept + refused.length,
    anomalies: outcome.anomalies.length,
  };
}

/** Listed fields the page's rejects lacked or retyped: recorded as sightings, the first of each logged. */
async function announceDrift(
  pool: pg.Pool,
  page: PageLoad,
  prepared: PreparedPage,
  whole: Statement,
  log: Logger,
): Promise<void> {
  const entries = driftEntries(prepared.rejects, whole.rejects);
  for (const s of await recordFieldDrift(pool, page.source, page.stream, entries))
    log.warn(
      { source: page.source, stream: page.stream, field: s.field, change: s.change },
      `the service's records changed shape: ${page.stream} field ${s.field} ${s.change}; such records are ` +
        `quarantined (see paysync status; acknowledge with paysync probe --ack ${s.field})`,
    );
}

function report(
  page: PageLoad,
  prepared: PreparedPage,
  outcome: PageOutcome,
  refused: readonly string[],
  log: Logger,
): void {
  const where = { source: page.source, stream: page.stream };
  for (const a of outcome.anomalies) {
    log.warn({ ...where, id: a.id, from: a.from, to: a.to }, 'a final status went back to a non-final one');
  }
  if (prepared.rejectedHere > 0)
    log.warn(
      { ...where, count: prepared.rejectedHere },
      'records PostgreSQL cannot store exactly, or sent twice with different contents, were rejected',
    );
  if (refused.length > 0)
    log.warn(
      { ...where, count: refused.length, ids: refused.slice(0, 20) },
      'PostgreSQL refused records the checks let through: they were quarantined with its message, the rest landed',
    );
  if (prepared.echoedKept > 0)
    log.warn(
      { ...where, count: prepared.echoedKept },
      'records echoed the API key: stored with it replaced by a marker, and noted in the rejects',
    );
  if (outcome.resolved > 0)
    log.info({ ...where, count: outcome.resolved }, 'earlier rejects resolved by valid copies');
}

/** Records one run of a window on its own (e.g. a failed window, which loads no page). */
export async function recordWindow(pool: pg.Pool, row: SyncWindowRow): Promise<void> {
  await pool.query(
    windowUpsertSql((k) => `$${k}`),
    windowParams(row),
  );
}
