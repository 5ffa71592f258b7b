/**
 * The records digest is read from a COPY's bytes; a day whose ids hold bytes CSV would quote (a line
 * break, a comma, quotes, the COPY's own quote and delimiter characters) still gets exactly the digest of
 * its lines joined by `\n`, as docs/finance.md defines it.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { recordsDigests } from '../../src/reconcile/records-digest.js';
import { loadPage } from '../../src/warehouse/loader.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { makePayment } from '../helpers/records.js';

const RANGE: [Date, Date] = [new Date('2021-06-15T00:00:00Z'), new Date('2021-06-16T00:00:00Z')];
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase('records_digest');
});

afterAll(async () => {
  await db?.drop();
});

/** The definition, line by line: what the COPY's bytes must hash to. */
async function expected(): Promise<string> {
  const { rows } = await db.pool.query<{ line: string }>(
    `SELECT id || '|' || status || '|' || amount::text || '|'
            || to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '|'
            || to_char(updated_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS line
       FROM reporting.payments WHERE created_at >= $1 AND created_at < $2 ORDER BY id COLLATE "C"`,
    RANGE,
  );
  return createHash('sha256')
    .update(rows.map((r) => r.line).join('\n'))
    .digest('hex');
}

async function digestNow(): Promise<string> {
  const client = await db.pool.connect();
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
    const digests = await recordsDigests(client, RANGE);
    await client.query('COMMIT');
    return digests.payments;
  } finally {
    client.release();
  }
}

async function load(ids: string[]): Promise<void> {
  const records = ids.map((id, i) =>
    makePayment({ id, amount: `${i + 1}00.50`, createdAt: `2021-06-15T0${i % 10}:00:00.000Z` }),
  );
  await loadPage(db.pool, { source: 'dig', stream: 'payments', organizationId: null, records, rejects: [] });
}

describe('records digest', () => {
  it('of no records is the digest of nothing', async () => {
    expect(await digestNow()).toBe(createHash('sha256').digest('hex'));
  });

  it('of plain ids equals its definition', async () => {
    await load(['p_1', 'p_2', 'p,3', 'p "4"']);
    expect(await digestNow()).toBe(await expected());
  });

  it('of ids holding bytes CSV quotes (line breaks, its quote and delimiter) equals its definition', async () => {
    await load(['q\n5', 'q\r6', 'q\u00017', 'q\u00028']);
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM reporting.payments`);
    expect(rows[0].n).toBe(8); // stored, not quarantined: the digest covers them
    expect(await digestNow()).toBe(await expected());
  });
});
