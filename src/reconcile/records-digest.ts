/**
 * The records digest of a day, per stream: SHA-256 (hex) over one line per record,
 * `id|status|amount|createdAt|updatedAt`, lines joined by `\n` (none after the last), records in byte
 * order of id (COLLATE "C"); the amount as PostgreSQL's text of the stored NUMERIC (scale kept: 100.00
 * stays 100.00), times in UTC as YYYY-MM-DDTHH:MM:SS.mmmZ. The day's records are those in the pack (all
 * sources, created in the local day); quarantined ones are not. docs/finance.md gives the SQL and
 * `sha256sum` that recompute it, and a test runs exactly that text.
 *
 * The lines are made by PostgreSQL and hashed here as their bytes stream from a COPY (the same connection
 * and snapshot as the caller's transaction), so memory stays flat whatever the day's size and no string
 * or row is made per record. The COPY writes CSV with a quote character (U+0001) and a delimiter
 * (U+0002) that a line never holds in practice: each line then comes exactly as it is, ended by LF. A
 * line CSV would have to quote (it holds LF, CR, U+0001 or U+0002) brings the quote character in; the
 * stream is then hashed again from a cursor, line by line. A digest changes
 * exactly when a record is added, removed, or changes status, amount or a time: a new layout of the
 * pack's files does not change it.
 */
import { createHash } from 'node:crypto';
import type { ClientBase } from 'pg';
import copyStreams from 'pg-copy-streams';
import type { RecordsDigests } from './manifest.js';
import { utcIsoSql } from './pack-query.js';

const BATCH = 10_000;

/** The digest lines of one stream's records created in [$1, $2), in digest order. */
export function digestLinesSql(table: 'reporting.payments' | 'reporting.transfers'): string {
  return `SELECT id || '|' || status || '|' || amount::text || '|'
                 || ${utcIsoSql('created_at')} || '|'
                 || ${utcIsoSql('updated_at')}
            FROM ${table}
           WHERE created_at >= $1 AND created_at < $2
           ORDER BY id COLLATE "C"`;
}

const COPY_QUOTE = 0x01;

/**
 * The digest from the COPY's bytes, or null when a line was quoted (it held a byte CSV quotes). COPY takes
 * no bind parameters: the range comes as literals, as the records files' COPY has it.
 */
async function copyDigest(
  client: ClientBase,
  table: 'reporting.payments' | 'reporting.transfers',
  range: [Date, Date],
): Promise<string | null> {
  const [start, end] = range.map((d) => `${client.escapeLiteral(d.toISOString())}::timestamptz`) as [
    string,
    string,
  ];
  const sql = digestLinesSql(table).replace('$1', start).replace('$2', end);
  const hash = createHash('sha256');
  let quoted = false;
  let pending: Buffer | null = null; // the last byte seen: an LF ending a line, hashed only if one follows
  for await (const chunk of client.query(
    copyStreams.to(`COPY (${sql}) TO STDOUT WITH (FORMAT csv, QUOTE e'\\x01', DELIMITER e'\\x02')`),
  ) as AsyncIterable<Buffer>) {
    if (quoted || chunk.length === 0) continue; // read to the end all the same
    if (chunk.includes(COPY_QUOTE)) {
      quoted = true;
      continue;
    }
    if (pending) hash.update(pending);
    hash.update(chunk.subarray(0, chunk.length - 1));
    pending = chunk.subarray(chunk.length - 1);
  }
  return quoted ? null : hash.digest('hex');
}

/** The digest from a cursor, line by line (the lines CSV would quote). */
async function cursorDigest(
  client: ClientBase,
  table: 'reporting.payments' | 'reporting.transfers',
  range: [Date, Date],
): Promise<string> {
  const hash = createHash('sha256');
  const cursor = `paysync_digest_${table.split('.')[1]}`;
  await client.query(`DECLARE ${cursor} NO SCROLL CURSOR FOR ${digestLinesSql(table)}`, range);
  let first = true;
  for (;;) {
    const { rows } = await client.query<[string]>({
      text: `FETCH ${BATCH} FROM ${cursor}`,
      rowMode: 'array',
    });
    for (const [line] of rows) {
      hash.update(first ? line : `\n${line}`, 'utf8');
      first = false;
    }
    if (rows.length < BATCH) break;
  }
  await client.query(`CLOSE ${cursor}`);
  return hash.digest('hex');
}

/** Both streams' digests. `client` must be inside a transaction (a cursor lives in one). */
async function streamDigest(
  client: ClientBase,
  table: 'reporting.payments' | 'reporting.transfers',
  range: [Date, Date],
): Promise<string> {
  return (await copyDigest(client, table, range)) ?? (await cursorDigest(client, table, range));
}

export async function recordsDigests(client: ClientBase, range: [Date, Date]): Promise<RecordsDigests> {
  return {
    payments: await streamDigest(client, 'reporting.payments', range),
    transfers: await streamDigest(client, 'reporting.transfers', range),
  };
}

/** The streams whose digests differ (an absent digest differs from any). */
export function changedStreams(
  a: RecordsDigests | null | undefined,
  b: RecordsDigests | null | undefined,
): Array<keyof RecordsDigests> {
  return (['payments', 'transfers'] as const).filter((s) => !a || !b || a[s] !== b[s]);
}
