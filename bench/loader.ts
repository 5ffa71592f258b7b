/**
 * Loader benchmark (not a test): what PostgreSQL spends per loaded row, beside a bare COPY, in one run.
 * Two fresh databases: one migrated up to 015 runs today's-before-016 page statement (the baseline, frozen
 * in bench/baseline-page-sql.ts); one migrated fully runs the loader (loadPage). Each scenario loads the
 * same N payments page by page through ONE connection, and the CPU of that connection's server process
 * (/proc/PID/stat, parse and plan and triggers included) is what is reported, per 1000 rows, so other
 * work on the machine does not blur it; wall time is printed beside it. Scenarios (medians of --repeat):
 *   - COPY of the same rows as CSV into an empty copy of reporting.payments (same indexes): the floor;
 *   - baseline: fresh table, then without its status-history insert, then without its per-id probe
 *     (valid on a fresh table only), to split its cost; the same rows again; every open record moving
 *     to a final status (transitions);
 *   - the variant where the upsert classifies ids (RETURNING xmax = 0, bench/returning-page-sql.ts);
 *   - loader: fresh table, same rows again, transitions; COPY into a temp staging table + the same
 *     merge; pages of 100; a fresh load without each secondary index and without the daily-totals
 *     triggers (what each costs);
 *   - the status-history view and 012's observed-statuses view read back, old table vs 016's view.
 * Usage: node dist/bench/loader.js [--rows 100000] [--page-size 1000] [--repeat 3] [--keep]
 * DATABASE_URL names the server (database names are replaced by fresh paysync_bench_* ones).
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm, writeFile, copyFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import pg from 'pg';
import copyStreams from 'pg-copy-streams';
import type { Payment } from '../src/upstream/schemas.js';
import { loadPage, pageParams, preparePage, type PageLoad } from '../src/warehouse/loader.js';
import { migrate } from '../src/warehouse/migrate.js';
import { defaultSqlDir } from '../src/warehouse/migration-files.js';
import { PAYMENTS } from '../src/warehouse/stream-tables.js';
import { processCpuSeconds } from './lib/cpu.js';
import { baselinePageSql, type BaselineParts } from './baseline-page-sql.js';
import { copyMergePage, createStaging } from './copy-merge.js';
import { returningPageSql } from './returning-page-sql.js';
import { benchPayments, paymentsCsv } from './payments-fixture.js';
import { dropBenchDatabase } from './bench-db.js';

interface Options {
  rows: number;
  pageSize: number;
  repeat: number;
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
    rows: value('--rows', 100_000),
    pageSize: value('--page-size', 1_000),
    repeat: value('--repeat', 3),
    keep: argv.includes('--keep'),
  };
}

const pagesOf = (records: Payment[], size: number): Payment[][] =>
  Array.from({ length: Math.ceil(records.length / size) }, (_, i) => records.slice(i * size, (i + 1) * size));

const FINAL = new Set(['COMPLETE', 'FAILED', 'TIMEOUT']);

/** The same records an hour later, every open one (INIT, PENDING) now COMPLETE: status transitions. */
const settled = (records: readonly Payment[]): Payment[] =>
  records.map((p) =>
    FINAL.has(p.status)
      ? p
      : { ...p, status: 'COMPLETE', updatedAt: new Date(Date.parse(p.updatedAt) + 3_600_000).toISOString() },
  );

/** One server process, measured: a pool of one connection (loadPage takes a pool). */
class Backend {
  private constructor(
    readonly pool: pg.Pool,
    readonly pid: number,
  ) {}

  static async open(url: string): Promise<Backend> {
    const pool = new pg.Pool({ connectionString: url, max: 1, idleTimeoutMillis: 0 });
    const { rows } = await pool.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
    return new Backend(pool, (rows[0] as { pid: number }).pid);
  }

  /** CPU seconds of the server process and wall seconds spent in `fn`. */
  async measure(fn: () => Promise<void>): Promise<{ cpu: number; wall: number }> {
    const cpu0 = processCpuSeconds(this.pid);
    const t0 = process.hrtime.bigint();
    await fn();
    const wall = Number(process.hrtime.bigint() - t0) / 1e9;
    return { cpu: processCpuSeconds(this.pid) - cpu0, wall };
  }
}

const pageLoad = (records: Payment[]): PageLoad => ({
  source: 'bench',
  stream: 'payments',
  organizationId: null,
  records,
  rejects: [],
});

async function loaderRun(b: Backend, pages: Payment[][]): Promise<void> {
  for (const records of pages) await loadPage(b.pool, pageLoad(records));
}

async function baselineRun(b: Backend, pages: Payment[][], parts: BaselineParts = {}): Promise<void> {
  const sql = baselinePageSql(PAYMENTS, parts);
  for (const records of pages) {
    const page = pageLoad(records);
    await b.pool.query(sql, pageParams(page, preparePage(page)));
  }
}

async function returningRun(b: Backend, pages: Payment[][]): Promise<void> {
  const sql = returningPageSql(PAYMENTS);
  for (const records of pages) {
    const page = pageLoad(records);
    await b.pool.query(sql, pageParams(page, preparePage(page)));
  }
}

async function copyMergeRun(b: Backend, pages: Payment[][]): Promise<void> {
  const client = await b.pool.connect();
  try {
    await createStaging(client);
    for (const records of pages) await copyMergePage(client, pageLoad(records));
  } finally {
    client.release();
  }
}

async function copyRun(b: Backend, csv: string): Promise<void> {
  const columns = [...PAYMENTS.columns.map((c) => c.name), 'source'].join(', ');
  const client = await b.pool.connect();
  try {
    const copy = client.query(
      copyStreams.from(`COPY bench.payments_copy (${columns}) FROM STDIN (FORMAT csv)`),
    );
    const chunks = function* (): Generator<string> {
      for (let i = 0; i < csv.length; i += 64 * 1024) yield csv.slice(i, i + 64 * 1024);
    };
    await pipeline(Readable.from(chunks()), copy);
  } finally {
    client.release();
  }
}

async function psqlCopyWall(url: string, csv: string): Promise<number> {
  const dir = await mkdtemp(join(tmpdir(), 'paysync-bench-'));
  const file = join(dir, 'payments.csv');
  await writeFile(file, csv);
  const columns = [...PAYMENTS.columns.map((c) => c.name), 'source'].join(', ');
  const copy = `\\copy bench.payments_copy (${columns}) FROM '${file}' WITH (FORMAT csv)`;
  try {
    const t0 = process.hrtime.bigint();
    await promisify(execFile)('psql', ['-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', url, '-c', copy]);
    return Number(process.hrtime.bigint() - t0) / 1e9;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function emptyTables(b: Backend, history: string): Promise<void> {
  await b.pool.query(
    `TRUNCATE reporting.payments, ${history}, reporting.daily_totals_by_zone, bench.payments_copy`,
  );
  await b.pool.query('VACUUM ANALYZE reporting.payments');
}

/** Databases migrated up to `last` (a migration number), fresh. */
async function benchDatabase(server: URL, last?: number): Promise<string> {
  const url = new URL(server);
  url.pathname = `/paysync_bench_${randomBytes(3).toString('hex')}`;
  let dir: string | undefined;
  if (last !== undefined) {
    dir = await mkdtemp(join(tmpdir(), 'paysync-bench-sql-'));
    for (const f of await readdir(defaultSqlDir()))
      if (/^\d{3}_.*\.sql$/.test(f) && Number(f.slice(0, 3)) <= last)
        await copyFile(join(defaultSqlDir(), f), join(dir, f));
  }
  try {
    await migrate(url.toString(), dir ? { sqlDir: dir } : {});
  } finally {
    if (dir) await rm(dir, { recursive: true, force: true });
  }
  return url.toString();
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)] as number;
};

class Results {
  private readonly runs = new Map<string, Array<{ cpu: number; wall: number }>>();
  add(label: string, r: { cpu: number; wall: number }): void {
    this.runs.set(label, [...(this.runs.get(label) ?? []), r]);
  }
  cpu(label: string): number {
    return median((this.runs.get(label) ?? []).map((r) => r.cpu));
  }
  wall(label: string): number {
    return median((this.runs.get(label) ?? []).map((r) => r.wall));
  }
  labels(): string[] {
    return [...this.runs.keys()];
  }
}

const SECONDARY = [
  'payments_created_at_idx',
  'payments_org_created_at_idx',
  'payments_reference_idx',
  'payments_open_idx',
] as const;

async function indexDefinitions(b: Backend): Promise<Map<string, string>> {
  const { rows } = await b.pool.query<{ name: string; def: string }>(
    "SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE schemaname = 'reporting' AND tablename = 'payments'",
  );
  return new Map(rows.map((r) => [r.name, r.def]));
}

const TRIGGERS = ['payments_daily_totals_insert', 'payments_daily_totals_update'];

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const server = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/paysync');
  const oldUrl = await benchDatabase(server, 15);
  const newUrl = await benchDatabase(server);
  const old = await Backend.open(oldUrl);
  const neu = await Backend.open(newUrl);
  const results = new Results();
  const n = options.rows;
  const per1000 = (label: string) => (1000 * 1000 * results.cpu(label)) / n; // CPU ms per 1000 rows
  try {
    for (const b of [old, neu])
      await b.pool.query(
        'CREATE SCHEMA bench; CREATE TABLE bench.payments_copy (LIKE reporting.payments INCLUDING ALL)',
      );
    const records = benchPayments(n);
    const pages = pagesOf(records, options.pageSize);
    const smallPages = pagesOf(records, 100);
    const moved = pagesOf(settled(records), options.pageSize);
    const csv = paymentsCsv(records, 'bench');
    const indexes = await indexDefinitions(neu);
    const oldHistory = 'reporting.payment_status_history';
    const newHistory = 'reporting.payment_status_changes';
    let psqlWall = 0;

    for (let round = 0; round < options.repeat; round++) {
      const run = async (b: Backend, label: string, fn: () => Promise<void>) =>
        results.add(label, await b.measure(fn));
      // The floor.
      await emptyTables(old, oldHistory);
      await run(old, 'COPY (CSV) into an empty table', () => copyRun(old, csv));
      await emptyTables(old, oldHistory);
      psqlWall = await psqlCopyWall(oldUrl, csv);
      // Baseline, and its cost split.
      await emptyTables(old, oldHistory);
      await run(old, 'baseline: fresh table', () => baselineRun(old, pages));
      await run(old, 'baseline: same rows again', () => baselineRun(old, pages));
      await run(old, 'baseline: transitions', () => baselineRun(old, moved));
      await emptyTables(old, oldHistory);
      await run(old, 'baseline: fresh, no history insert', () => baselineRun(old, pages, { history: false }));
      await emptyTables(old, oldHistory);
      await run(old, 'baseline: fresh, no per-id probe', () => baselineRun(old, pages, { classify: false }));
      await emptyTables(old, oldHistory);
      await run(old, 'baseline: fresh, pages of 100', () => baselineRun(old, smallPages));
      // The loader.
      await emptyTables(neu, newHistory);
      await run(neu, 'loader: fresh table', () => loaderRun(neu, pages));
      await run(neu, 'loader: same rows again', () => loaderRun(neu, pages));
      await run(neu, 'loader: transitions', () => loaderRun(neu, moved));
      await emptyTables(neu, newHistory);
      await run(neu, 'upsert classifies (xmax): fresh table', () => returningRun(neu, pages));
      await run(neu, 'upsert classifies (xmax): same rows again', () => returningRun(neu, pages));
      await run(neu, 'upsert classifies (xmax): transitions', () => returningRun(neu, moved));
      await emptyTables(neu, newHistory);
      await run(neu, 'loader: fresh, COPY to staging + merge', () => copyMergeRun(neu, pages));
      await emptyTables(neu, newHistory);
      await run(neu, 'loader: fresh, pages of 100', () => loaderRun(neu, smallPages));
      for (const name of SECONDARY) {
        await emptyTables(neu, newHistory);
        await neu.pool.query(`DROP INDEX reporting.${name}`);
        await run(neu, `loader: fresh, without ${name}`, () => loaderRun(neu, pages));
        await neu.pool.query(indexes.get(name) as string);
      }
      await emptyTables(neu, newHistory);
      for (const t of TRIGGERS) await neu.pool.query(`ALTER TABLE reporting.payments DISABLE TRIGGER ${t}`);
      await run(neu, 'loader: fresh, without daily-totals triggers', () => loaderRun(neu, pages));
      for (const t of TRIGGERS) await neu.pool.query(`ALTER TABLE reporting.payments ENABLE TRIGGER ${t}`);
      // Reading the history back: after fresh + transitions on both sides.
      await emptyTables(old, oldHistory);
      await emptyTables(neu, newHistory);
      await baselineRun(old, pages);
      await baselineRun(old, moved);
      await loaderRun(neu, pages);
      await loaderRun(neu, moved);
      for (const b of [old, neu]) await b.pool.query('VACUUM ANALYZE');
      for (const [b, side] of [
        [old, 'table (015)'],
        [neu, 'view (016)'],
      ] as const) {
        const read = (sql: string) => async () => void (await b.pool.query(sql));
        await run(b, `read: status history, ${side}`, read('SELECT * FROM reporting.payment_status_history'));
        await run(
          b,
          `read: statuses observed, ${side}`,
          read('SELECT * FROM reporting.payment_statuses_observed'),
        );
      }
    }

    const copyCpu = per1000('COPY (CSV) into an empty table');
    const copyWall = results.wall('COPY (CSV) into an empty table');
    console.log(
      `${n.toLocaleString('en-US')} payments, pages of ${options.pageSize}, median of ${options.repeat}, ` +
        `PostgreSQL at ${server.host}; CPU of the loading connection's server process`,
    );
    console.log(
      `${'scenario'.padEnd(58)} ${'CPU ms/1000'.padStart(11)} ${'÷COPY'.padStart(6)} ${'wall s'.padStart(7)} ${'÷COPY'.padStart(6)}`,
    );
    for (const label of results.labels()) {
      if (label.startsWith('read:')) continue;
      const cpu = per1000(label);
      const wall = results.wall(label);
      console.log(
        `${label.padEnd(58)} ${cpu.toFixed(2).padStart(11)} ${(cpu / copyCpu).toFixed(2).padStart(6)} ` +
          `${wall.toFixed(2).padStart(7)} ${(wall / copyWall).toFixed(2).padStart(6)}`,
      );
    }
    console.log(`psql \\copy (wall, last round): ${psqlWall.toFixed(2)} s`);
    const b = (l: string) => per1000(`baseline: ${l}`);
    const l = (x: string) => per1000(`loader: ${x}`);
    console.log(
      `baseline split per 1000 fresh rows: status history ${(b('fresh table') - b('fresh, no history insert')).toFixed(2)} ms, ` +
        `per-id probe ${(b('fresh table') - b('fresh, no per-id probe')).toFixed(2)} ms`,
    );
    console.log(
      `loader / baseline CPU: fresh ${(l('fresh table') / b('fresh table')).toFixed(2)}, ` +
        `same rows again ${(l('same rows again') / b('same rows again')).toFixed(2)}, ` +
        `transitions ${(l('transitions') / b('transitions')).toFixed(2)}, ` +
        `pages of 100 ${(l('fresh, pages of 100') / b('fresh, pages of 100')).toFixed(2)}`,
    );
    const x = (k: string) => per1000(`upsert classifies (xmax): ${k}`);
    console.log(
      `upsert classifies (xmax) / loader CPU: fresh ${(x('fresh table') / l('fresh table')).toFixed(2)}, ` +
        `same rows again ${(x('same rows again') / l('same rows again')).toFixed(2)}, ` +
        `transitions ${(x('transitions') / l('transitions')).toFixed(2)}`,
    );
    console.log(
      `what each costs, loader fresh (ms per 1000 rows): ` +
        [
          ...SECONDARY.map((x) => [x, `without ${x}`]),
          ['daily-totals triggers', 'without daily-totals triggers'],
        ]
          .map(([name, label]) => `${name} ${(l('fresh table') - l(`fresh, ${label}`)).toFixed(2)}`)
          .join(', '),
    );
    for (const q of ['status history', 'statuses observed'])
      console.log(
        `read ${q}: table (015) ${(results.cpu(`read: ${q}, table (015)`) * 1000).toFixed(0)} ms CPU, ` +
          `view (016) ${(results.cpu(`read: ${q}, view (016)`) * 1000).toFixed(0)} ms CPU ` +
          `(${(results.cpu(`read: ${q}, view (016)`) / results.cpu(`read: ${q}, table (015)`)).toFixed(2)}x)`,
      );
  } finally {
    await old.pool.end();
    await neu.pool.end();
    if (options.keep) console.log(`kept ${oldUrl} and ${newUrl}`);
    else {
      await dropBenchDatabase(oldUrl);
      await dropBenchDatabase(newUrl);
    }
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
