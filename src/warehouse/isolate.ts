/**
 * The backstop behind the record checks: when a page statement still fails on data, the page is cut in
 * halves and each half run again, down to the single records PostgreSQL refuses. Those are quarantined
 * in sync_rejects with PostgreSQL's own message; every other record lands. One bad record never costs its
 * neighbours, and never blocks its window on every retry.
 *
 * "On data" means the SQLSTATE classes a record can cause (listed as data, not matched from messages):
 * 21 cardinality (a row touched twice), 22 data exception (out of range, bad encoding), 23 integrity,
 * 54 program limit (an index row too large). Anything else (connection lost, a lock, a bug) is thrown as
 * it was. The halves commit separately, which is safe: a page statement is an idempotent forward-only
 * upsert; the window row, when there is one, goes with the last half so that it is written after
 * every record of the page.
 */
import type { Payment, Transfer } from '../upstream/schemas.js';
import { rejectRow, type RejectRow } from './page-prep.js';
import type { Row } from './stream-tables.js';
import type { SyncWindowRow } from '../sync/ports.js';

/** SQLSTATE classes a record's content can cause. */
export const DATA_ERROR_CLASSES: readonly string[] = ['21', '22', '23', '54'];

export function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && code.length === 5 && DATA_ERROR_CLASSES.includes(code.slice(0, 2));
}

export interface Statement {
  rows: Row[];
  records: Array<Payment | Transfer>;
  rejects: RejectRow[];
  window: SyncWindowRow | undefined;
}

export interface StatementOutcome {
  inserted: number;
  updated: number;
  unchanged: number;
  stale: number;
  anomalies: Array<{ id: string; from: string; to: string }>;
  resolved: number;
}

function add(a: StatementOutcome, b: StatementOutcome): StatementOutcome {
  return {
    inserted: a.inserted + b.inserted,
    updated: a.updated + b.updated,
    unchanged: a.unchanged + b.unchanged,
    stale: a.stale + b.stale,
    anomalies: a.anomalies.concat(b.anomalies),
    resolved: a.resolved + b.resolved,
  };
}

const pgMessage = (error: unknown): string => {
  const e = error as { message?: unknown; code?: unknown };
  return `PostgreSQL refused it: ${String(e.message ?? error)} (SQLSTATE ${String(e.code)})`;
};

/** The last resort for a reject PostgreSQL refuses even as a reject: its hash, size and the message. */
function bareReject(row: RejectRow, error: unknown): RejectRow {
  return {
    recordId: null,
    rawJson: null,
    rawText: `(raw copy not storable; sha256 ${row.rawHash}, ${row.rawBytes} bytes)`,
    rawHash: row.rawHash,
    rawBytes: row.rawBytes,
    truncated: true,
    reason: `${row.reason.slice(0, 500)}; ${pgMessage(error)}`.slice(0, 2_000),
  };
}

function halves(part: Statement): [Statement, Statement] {
  const r = Math.ceil(part.rows.length / 2);
  const j = Math.ceil(part.rejects.length / 2);
  return [
    {
      rows: part.rows.slice(0, r),
      records: part.records.slice(0, r),
      rejects: part.rejects.slice(0, j),
      window: undefined,
    },
    {
      rows: part.rows.slice(r),
      records: part.records.slice(r),
      rejects: part.rejects.slice(j),
      window: part.window,
    },
  ];
}

export interface Isolated {
  outcome: StatementOutcome;
  /** Ids of the records PostgreSQL refused (now rejects). */
  refused: string[];
}

/** Runs `part`; on a data error splits it until the refused records are isolated and quarantined. */
export async function loadIsolating(
  run: (part: Statement) => Promise<StatementOutcome>,
  part: Statement,
): Promise<Isolated> {
  try {
    return { outcome: await run(part), refused: [] };
  } catch (error) {
    if (!isDataError(error)) throw error;
    const size = part.rows.length + part.rejects.length;
    if (size === 0) throw error; // the window row alone: nothing to isolate
    if (size === 1) return quarantineOne(run, part, error);
    const [first, second] = halves(part);
    const a = await loadIsolating(run, first);
    const b = await loadIsolating(run, second);
    return { outcome: add(a.outcome, b.outcome), refused: a.refused.concat(b.refused) };
  }
}

async function quarantineOne(
  run: (part: Statement) => Promise<StatementOutcome>,
  part: Statement,
  error: unknown,
): Promise<Isolated> {
  const record = part.records[0];
  const refused = record ? [record.id] : [];
  const reject = record
    ? rejectRow({ raw: record, reason: pgMessage(error), id: record.id })
    : (part.rejects[0] as RejectRow);
  const alone = (r: RejectRow) => run({ rows: [], records: [], rejects: [r], window: part.window });
  try {
    return { outcome: await alone(reject), refused };
  } catch (again) {
    if (!isDataError(again)) throw again;
    return { outcome: await alone(bareReject(reject, again)), refused };
  }
}
