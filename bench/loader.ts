/**
 * Loader benchmark (not a test): what PostgreSQL spends per loaded row, beside a bare COPY, in one run.
 * Fresh databases: two migrated up to 015 run the page statement of before 016 (the baseline, frozen in
 * bench/baseline-page-sql.ts), with and without its history insert; the others, migrated fully, run the
 * loader (loadPage) and its variants. Each loads through ONE connection, and the CPU of that
 * connection's server process (/proc/PID/stat: parse, plan and triggers included) is what is reported,
 * per 1000 rows. Sides compared run page by page in turn, so that other work on the machine weighs on
 * them alike (on a busy machine, compare ratios of sides run together); wall time is printed beside.
 * Scenarios (summed over --repeat rounds):
 *   - COPY of the same rows as CSV into an empty copy of reporting.payments (same indexes): the floor;
 *   - baseline: fresh table, then without its status-history insert, then without its per-id probe
 *     (valid on a fresh table only), to split its cost; the same rows again; every open record moving
 *     to a final status (transitions);
 *   - the new-records statement alone (page-sql.ts newRecordsPageSql: the upsert classifies ids with
 *     RETURNING xmax = 0), which the loader picks after a page of mostly new records;
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
import type { PageLoad } from '../src/sync/ports.js';
import { loadPage, pageParams, preparePage } from '../src/warehouse/loader.js';
import { migrate } from '../src/warehouse/migrate.js';
import { defaultSqlDir } from '../src/warehouse/migration-files.js';
import { newRecordsPageSql } from '../src/warehouse/page-sql.js';
import { PAYMENTS } from '../src/warehouse/stream-tables.js';
import { processCpuSeconds } from './lib/cpu.js';
import { baselinePageSql, type BaselineParts } from './baseline-page-sql.js';
import { copyMergePage, createStaging } from './copy-merge.js';
import { benchPayments, paymentsCsv } from './payments-fixture.js';
import { wholeArg } from './lib/args.js';
import { dropBenchDatabase } from './bench-db.js';

interface Options {
  rows: number;
  pageSize: number;
  repeat: number;
  keep: boolean;
}

function parseOptions(argv: readonly string[]): Options {
  return {
    rows: wholeArg('--rows', 100_000, 1, argv),
    pageSize: wholeArg('--page-size', 1_000, 1, argv),
    repeat: wholeArg('--repeat', 3, 1, argv),
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
  const sql = newRecordsPageSql(PAYMENTS);
  for (const records of pages) {
    const page = pageLoad(records);
    await b.pool.query(sql, pageParams(page, preparePage(page)));
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

/** Sums of CPU and wall seconds, and rows, per label. */
class Totals {
  private readonly sums = new Map<string, { cpu: number; wall: number; rows: number }>();
  add(label: string, r: { cpu: number; wall: number }, rows: number): void {
    const t = this.sums.get(label) ?? { cpu: 0, wall: 0, rows: 0 };
    this.sums.set(label, { cpu: t.cpu + r.cpu, wall: t.wall + r.wall, rows: t.rows + rows });
  }
  /** CPU ms per 1000 rows. */
  cpu(label: string): number {
    const t = this.sums.get(label);
    if (!t) throw new Error(`no measurement named ${label}`);
    return (1000 * 1000 * t.cpu) / t.rows;
  }
  wall(label: string): number {
    const t = this.sums.get(label);
    if (!t) throw new Error(`no measurement named ${label}`);
    return (1000 * 1000 * t.wall) / t.rows;
  }
  labels(): string[] {
    return [...this.sums.keys()];
  }
}

interface Side {
  label: string;
  b: Backend;
  history: string;
  load: (records: Payment[]) => Promise<void>;
}

/**
 * Every page goes through each side in turn, so all sides meet the same machine (other work on it moves
 * them together); each side's server-process CPU is added up under "side: phase".
 */
async function interleaved(sides: readonly Side[], phase: string, pages: Payment[][], totals: Totals) {
  for (const page of pages)
    for (const side of sides)
      totals.add(`${side.label}: ${phase}`, await side.b.measure(() => side.load(page)), page.length);
}

const SECONDARY = [
  'payments_created_at_idx',
  'payments_org_created_at_idx',
  'payments_reference_idx',
  'payments_open_idx',
] as const;
const TRIGGERS = ['payments_daily_totals_insert', 'payments_daily_totals_update'];

async function indexDefinitions(b: Backend): Promise<Map<string, string>> {
  const { rows } = await b.pool.query<{ name: string; def: string }>(
    "SELECT indexname AS name, indexdef AS def FROM pg_indexes WHERE schemaname = 'reporting' AND tablename = 'payments'",
  );
  return new Map(rows.map((r) => [r.name, r.def]));
}

async function main(): Promise<void> {
  const options = parseOptions(process.argv.slice(2));
  const server = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/paysync');
  const urls = [
    await benchDatabase(server, 15),
    await benchDatabase(server, 15),
    await benchDatabase(server),
    await benchDatabase(server),
    await benchDatabase(server),
  ];
  const [a, d, b, c, e] = await Promise.all(urls.map((u) => Backend.open(u)));
  if (!a || !b || !c || !d || !e) throw new Error('bench databases not opened');
  const totals = new Totals();
  const OLD = 'reporting.payment_status_history';
  const NEW = 'reporting.payment_status_changes';
  const baseline: Side = { label: 'baseline', b: a, history: OLD, load: (r) => baselineRun(a, [r]) };
  const noHistory: Side = {
    label: 'baseline without history insert',
    b: d,
    history: OLD,
    load: (r) => baselineRun(d, [r], { history: false }),
  };
  const loader: Side = { label: 'loader', b, history: NEW, load: (r) => loaderRun(b, [r]) };
  const xmax: Side = {
    label: 'new-records statement alone',
    b: c,
    history: NEW,
    load: (r) => returningRun(c, [r]),
  };
  try {
    for (const x of [a, b, c, d, e])
      await x.pool.query(
        'CREATE SCHEMA bench; CREATE TABLE bench.payments_copy (LIKE reporting.payments INCLUDING ALL)',
      );
    const records = benchPayments(options.rows);
    const pages = pagesOf(records, options.pageSize);
    const smallPages = pagesOf(records, 100);
    const moved = pagesOf(settled(records), options.pageSize);
    const csv = paymentsCsv(records, 'bench');
    const indexes = await indexDefinitions(e);
    let psqlWall = 0;
    const empty = async (sides: readonly Side[]) => {
      for (const s of sides) await emptyTables(s.b, s.history);
    };

    for (let round = 0; round < options.repeat; round++) {
      await emptyTables(a, OLD);
      totals.add('COPY (CSV) into an empty table', await a.measure(() => copyRun(a, csv)), records.length);
      await emptyTables(a, OLD);
      psqlWall = await psqlCopyWall(urls[0] as string, csv);

      const main4 = [baseline, noHistory, loader, xmax];
      await empty(main4);
      await interleaved(main4, 'fresh table', pages, totals);
      await interleaved(main4, 'same rows again', pages, totals);
      await interleaved(main4, 'transitions', moved, totals);
      for (const [x, side] of [
        [a, 'table (015)'],
        [b, 'view (016)'],
      ] as const) {
        await x.pool.query('VACUUM ANALYZE');
        for (const [name, sql] of [
          ['status history', 'SELECT * FROM reporting.payment_status_history'],
          ['statuses observed', 'SELECT * FROM reporting.payment_statuses_observed'],
        ] as const)
          totals.add(`read ${name}, ${side}`, await x.measure(async () => void (await x.pool.query(sql))), 1);
      }
      await empty([baseline, loader]);
      await interleaved([baseline, loader], 'pages of 100', smallPages, totals);

      // What each index, the daily-totals triggers and COPY staging cost: the loader on a full schema
      // beside the loader on a database without that index (or triggers, or with COPY), page by page.
      const variants: Array<[string, () => Promise<void>, () => Promise<void>]> = [
        ...SECONDARY.map((name): [string, () => Promise<void>, () => Promise<void>] => [
          `without ${name}`,
          async () => void (await e.pool.query(`DROP INDEX reporting.${name}`)),
          async () => void (await e.pool.query(indexes.get(name) as string)),
        ]),
        [
          'without daily-totals triggers',
          async () => {
            for (const t of TRIGGERS)
              await e.pool.query(`ALTER TABLE reporting.payments DISABLE TRIGGER ${t}`);
          },
          async () => {
            for (const t of TRIGGERS)
              await e.pool.query(`ALTER TABLE reporting.payments ENABLE TRIGGER ${t}`);
          },
        ],
      ];
      for (const [label, apply, undo] of variants) {
        await empty([loader]);
        await emptyTables(e, NEW);
        await apply();
        const variant: Side = { label, b: e, history: NEW, load: (r) => loaderRun(e, [r]) };
        const reference: Side = { ...loader, label: `loader beside "${label}"` };
        await interleaved([reference, variant], 'fresh table', pages, totals);
        await undo();
      }
      await empty([loader]);
      await emptyTables(e, NEW);
      const client = await e.pool.connect();
      try {
        await createStaging(client);
        const copyMerge: Side = {
          label: 'COPY to staging + merge',
          b: e,
          history: NEW,
          load: (r) => copyMergePage(client, pageLoad(r)),
        };
        await interleaved(
          [{ ...loader, label: 'loader beside "COPY to staging + merge"' }, copyMerge],
          'fresh table',
          pages,
          totals,
        );
      } finally {
        client.release();
      }
    }

    const floor = totals.cpu('COPY (CSV) into an empty table');
    const floorWall = totals.wall('COPY (CSV) into an empty table');
    console.log(
      `${options.rows.toLocaleString('en-US')} payments, pages of ${options.pageSize}, ${options.repeat} rounds, ` +
        `PostgreSQL at ${server.host}. CPU of each loading connection's server process, sides run page by ` +
        `page in turn; ms per 1000 rows`,
    );
    console.log(
      `${'scenario'.padEnd(64)} ${'CPU ms'.padStart(7)} ${'÷COPY'.padStart(6)} ${'wall ms'.padStart(8)} ${'÷COPY'.padStart(6)}`,
    );
    for (const label of totals.labels()) {
      if (label.startsWith('read ')) continue;
      const cpu = totals.cpu(label);
      const wall = totals.wall(label);
      console.log(
        `${label.padEnd(64)} ${cpu.toFixed(2).padStart(7)} ${(cpu / floor).toFixed(2).padStart(6)} ` +
          `${wall.toFixed(1).padStart(8)} ${(wall / floorWall).toFixed(2).padStart(6)}`,
      );
    }
    console.log(`psql \\copy of the same rows (wall, last round): ${psqlWall.toFixed(2)} s`);
    const ratio = (x: string, y: string) => (totals.cpu(x) / totals.cpu(y)).toFixed(2);
    console.log(
      `baseline's status-history insert, fresh: ${(totals.cpu('baseline: fresh table') - totals.cpu('baseline without history insert: fresh table')).toFixed(2)} ms per 1000 rows`,
    );
    for (const phase of ['fresh table', 'same rows again', 'transitions', 'pages of 100'])
      console.log(
        `loader ÷ baseline, ${phase}: ${ratio(`loader: ${phase}`, `baseline: ${phase}`)}` +
          (phase === 'pages of 100'
            ? ''
            : `; new-records statement alone ÷ loader: ${ratio(`new-records statement alone: ${phase}`, `loader: ${phase}`)}`),
      );
    const costs = [
      ...SECONDARY.map((n) => `without ${n}`),
      'without daily-totals triggers',
      'COPY to staging + merge',
    ].map(
      (label) =>
        `${label.replace(/^without /, '')} ${(totals.cpu(`loader beside "${label}": fresh table`) - totals.cpu(`${label}: fresh table`)).toFixed(2)}`,
    );
    console.log(
      `CPU saved per 1000 fresh rows by each variant (ms, loader beside it; positive: the variant is cheaper): ${costs.join(', ')}`,
    );
    for (const name of ['status history', 'statuses observed'])
      console.log(
        `read ${name} (CPU per read): table (015) ${(totals.cpu(`read ${name}, table (015)`) / 1000).toFixed(0)} ms, ` +
          `view (016) ${(totals.cpu(`read ${name}, view (016)`) / 1000).toFixed(0)} ms ` +
          `(${ratio(`read ${name}, view (016)`, `read ${name}, table (015)`)}x)`,
      );
  } finally {
    for (const x of [a, b, c, d, e]) await x.pool.end();
    if (options.keep) console.log(`kept ${urls.join(', ')}`);
    else for (const u of urls) await dropBenchDatabase(u);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
