/**
 * The records digest of a day, per stream: SHA-256 (hex) over one line per record,
 * `id|status|amount|createdAt|updatedAt`, lines joined by `\n` (none after the last), records in byte
 * order of id (COLLATE "C"); the amount as PostgreSQL's text of the stored NUMERIC (scale kept: 100.00
 * stays 100.00), times in UTC as YYYY-MM-DDTHH:MM:SS.mmmZ. The day's records are those in the pack (all
 * sources, created in the local day); quarantined ones are not. docs/finance.md gives the SQL and
 * `sha256sum` that recompute it, and a test runs exactly that text.
 *
 * The lines are made by PostgreSQL and hashed here as they stream from a cursor (the same connection and
 * snapshot as the caller's transaction), so memory stays flat whatever the day's size. A digest changes
 * exactly when a record is added, removed, or changes status, amount or a time: a new layout of the
 * pack's files does not change it.
 */
import { createHash } from 'node:crypto';
import type { ClientBase } from 'pg';
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

async function streamDigest(
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
