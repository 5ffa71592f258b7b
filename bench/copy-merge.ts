/**
 * The alternative loader measured against the unnest statement: per page, COPY the rows into a
 * temporary staging table, then run the same merge statement reading from it. Same guarantees (one
 * transaction per page), more round trips (BEGIN, COPY, merge, COMMIT).
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import copyStreams from 'pg-copy-streams';
import type { PageLoad } from '../src/sync/ports.js';
import { pageParams, preparePage } from '../src/warehouse/loader.js';
import { pageSql } from '../src/warehouse/page-sql.js';
import { PAYMENTS } from '../src/warehouse/stream-tables.js';
import { csvLine } from './payments-fixture.js';

const STAGING = 'pg_temp.payments_staging';
const CHUNK = 64 * 1024; // one CopyData message per chunk: small writes make COPY several times slower

function* chunks(lines: readonly string[]): Generator<string> {
  let buffer = '';
  for (const line of lines) {
    buffer += line;
    if (buffer.length >= CHUNK) {
      yield buffer;
      buffer = '';
    }
  }
  if (buffer) yield buffer;
}

export async function createStaging(client: pg.PoolClient): Promise<void> {
  const columns = PAYMENTS.columns.map((c) => `${c.name} ${c.type}`).join(', ');
  await client.query(`CREATE TEMP TABLE IF NOT EXISTS payments_staging (${columns}) ON COMMIT DELETE ROWS`);
}

export async function copyMergePage(client: pg.PoolClient, page: PageLoad): Promise<void> {
  const prepared = preparePage(page);
  const names = PAYMENTS.columns.map((c) => c.name).join(', ');
  const lines = prepared.rows.map(csvLine);
  await client.query('BEGIN');
  try {
    const copy = client.query(copyStreams.from(`COPY ${STAGING} (${names}) FROM STDIN WITH (FORMAT csv)`));
    await pipeline(Readable.from(chunks(lines)), copy);
    await client.query(pageSql(PAYMENTS, STAGING), pageParams(page, prepared, false));
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}
