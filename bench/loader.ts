/**
 * Loader benchmark (not a test). In one fresh database it loads the same N payments
 *   1. with `psql \copy` of their CSV into an empty copy of reporting.payments (same indexes): the floor;
 *   2. through loadPage, page by page (the unnest statement), into the empty reporting.payments;
 *   3. through loadPage again: every row a no-op (only synced_at moves);
 *   4. with the COPY-into-staging + merge variant, first load and reload, after emptying the tables;
 * and prints rows/s and the ratios. Usage:
 *   node dist/bench/loader.js [--rows 200000] [--page-size 1000] [--keep]
 * DATABASE_URL names the server (its database name is replaced by a fresh paysync_bench_* one).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type pg from 'pg';
import type { Payment } from '../src/upstream/schemas.js';
import { loadPage } from '../src/warehouse/loader.js';
import { migrate } from '../src/warehouse/migrate.js';
import { createPool } from '../src/warehouse/pool.js';
import { PAYMENTS } from '../src/warehouse/stream-tables.js';
import { copyMergePage, createStaging } from './copy-merge.js';
import { benchPayments, paymentsCsv } from './payments-fixture.js';
import { dropBenchDatabase } from './bench-db.js';

interface Options {
  rows: number;
  pageSize: number;
  keep: boolean;
}

function parseOptions(argv: readonly string[]): Options {
  const value = (flag: string, fallback: number): number => {
    const i = argv.indexOf(flag);
    const n = i >= 0 ? Number(argv[i + 1]) : fallback;
    if (!Number.isInteger(n) || n <= 0) throw new Error(`${flag} needs a positive whole number`);
    return n;
  };
  return {
    rows: value('--rows', 200_000),
    pageSize: value('--page-size', 1_000),
    keep: argv.includes('--keep'),
  };
}

const pagesOf = (records: Payment[], size: number): Payment[][] =>
  Array.from({ length: Math.ceil(records.length / size) }, (_, i) => records.slice(i * size, (i + 1) * size));

async function timed(fn: () => Promise<void>): Promise<number> {
  const start = process.hrtime.bigint();
  await fn();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

async function psqlCopy(url: string, records: Payment[]): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'paysync-bench-'));
  const file = join(dir, 'payments.csv');
  await writeFile(file, paymentsCsv(records, 'bench'));
  const columns = [...PAYMENTS.columns.map((c) => c.name), 'source'].join(', ');
  const copy = `\\copy bench.payments_copy (${columns}) FROM '${file}' WITH (FORMAT csv)`;
  try {
    return await timed(async () => {
      await promisify(execFile)('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', url, '-c', copy]);
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function loaderRun(pool: pg.Pool, pages: Payment[][]): Promise<number> {
  return timed(async () => {
    for (const records of pages) {
      await loadPage(pool, {
        source: 'bench',
        stream: 'payments',
        organizationId: null,
        records,
        rejects: [],
      });
    }
  });
}

async function copyMergeRun(pool: pg.Pool, pages: Payment[][]): Promise<number> {
  const client = await pool.connect();
  try {
    await createStaging(client);
    return await timed(async () => {
      for (const records of pages) {
        await copyMergePage(client, {
          source: 'bench',
          stream: 'payments',
          organizationId: null,
          records,
          rejects: [],
        });
      }
    });
  } finally {
    client.release();
  }
}

async function emptyTables(pool: pg.Pool): Promise<void> {
  await pool.query('TRUNCATE reporting.payments, reporting.payment_status_history');
  await pool.query('VACUUM ANALYZE reporting.payments');
}

function line(label: string, rows: number, seconds: number, floor: number): string {
  const rate = Math.round(rows / seconds).toLocaleString('en-US');
  return `${label.padEnd(34)} ${seconds.toFixed(2).padStart(7)} s ${rate.padStart(10)} rows/s ${(seconds / floor).toFixed(2).padStart(6)}x`;
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const server = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/paysync');
  server.pathname = `/paysync_bench_${randomBytes(3).toString('hex')}`;
  const url = server.toString();
  await migrate(url);
  const pool = createPool(url, { max: 2, applicationName: 'paysync bench' });
  try {
    await pool.query(
      'CREATE SCHEMA bench; CREATE TABLE bench.payments_copy (LIKE reporting.payments INCLUDING ALL)',
    );
    const records = benchPayments(options.rows);
    const pages = pagesOf(records, options.pageSize);
    const n = records.length;
    const copy = await psqlCopy(url, records);
    const first = await loaderRun(pool, pages);
    const again = await loaderRun(pool, pages);
    await emptyTables(pool);
    const mergeFirst = await copyMergeRun(pool, pages);
    const mergeAgain = await copyMergeRun(pool, pages);
    console.log(
      `${n.toLocaleString('en-US')} payments, pages of ${options.pageSize}, PostgreSQL at ${server.host}`,
    );
    console.log(line('psql \\copy into an empty table', n, copy, copy));
    console.log(line('loadPage (unnest), fresh table', n, first, copy));
    console.log(line('loadPage (unnest), same rows again', n, again, copy));
    console.log(line('COPY + merge, fresh table', n, mergeFirst, copy));
    console.log(line('COPY + merge, same rows again', n, mergeAgain, copy));
    console.log(`no-op reload / first load: ${(again / first).toFixed(2)}`);
  } finally {
    await pool.end();
    if (options.keep) console.log(`kept ${url}`);
    else await dropBenchDatabase(url);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
