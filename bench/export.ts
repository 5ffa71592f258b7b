/**
 * Export benchmark: one day of N payments (20k, 100k and 200k) written as a whole pack by exportDay (the
 * CSVs, pack.xlsx, summary, state, restatement, manifest), against `psql \copy (SELECT … ORDER BY …) TO`
 * CSV of the same rows, in the same run on the same database. Goals: the 100k-payment day's export within
 * 3x the bare copy, and a flat peak memory (VmHWM of the export's own process) from 20k to 200k.
 * Each export runs in its own child process so its peak RSS (maxRSS) and CPU are its own; it runs a
 * second time with the heap bounded as the operations docs advise (--max-old-space-size=128), since V8
 * otherwise lets garbage pile up lazily and the unbounded peak says little about what the export holds.
 * Beside each figure, the CPU of the PostgreSQL backends serving it (and psql's, for the copy): the
 * export's CPU and its backends' together, over the machine's cores, is the shortest wall time its work
 * could take. And how long the export's main thread, through which every byte of the records files
 * passes, was ready to run but waited for a core that its backends, V8's compiler or deflate held.
 *
 *   npm run build && node dist/bench/export.js            (BENCH_DATABASE_URL to choose the server)
 *   node dist/bench/export.js --base /tmp/base/dist [--rounds 8]
 *
 * With `--base`, two builds compared on the 100,000-payment day only: the base build's export and this
 * build's, alternating which goes first in each round, each round beside a `psql \copy` of the same rows,
 * then the medians of each (docs/benchmarks.md, comparing two builds).
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { parseSettings } from '../src/config/settings.js';
import { silentLogger } from '../src/log.js';
import { exportDay } from '../src/reconcile/export-day.js';
import { createRuntime } from '../src/runtime.js';
import { dayWindow } from '../src/sync/windows.js';
import { migrate } from '../src/warehouse/migrate.js';
import { createPool } from '../src/warehouse/pool.js';
import { dropBenchDatabase } from './bench-db.js';
import { insertSyntheticDay } from './export-fixture.js';
import { textArg, wholeArg } from './lib/args.js';
import { processCpuSeconds, threadCpuSeconds, threadWaitSeconds, withDatabaseCpu } from './lib/cpu.js';
import { median } from './lib/median.js';

const ZONE = 'Africa/Porto-Novo';
const QUICK = process.argv.includes('--quick');
/** `--json`: the last line is the rows of bench/run.ts's final table. */
const JSON_ROWS = process.argv.includes('--json');
const SIZES: Array<[string, number]> = [
  ['2024-02-01', QUICK ? 2_000 : 20_000],
  ['2024-02-03', QUICK ? 10_000 : 100_000],
  ['2024-02-02', QUICK ? 20_000 : 200_000],
];
const URL_ = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/paysync_bench_export';

/** Child mode: export one day, print {ms, cpuMs, mainMs, mainWaitMs, maxRssMb, rows} as JSON. */
async function child(day: string, exportDir: string): Promise<void> {
  const settings = parseSettings({ DATABASE_URL: URL_, EXPORT_DIR: exportDir, REPORT_TIMEZONE: ZONE });
  const runtime = await createRuntime(settings, { log: silentLogger, name: 'bench-export' });
  const cpu = process.cpuUsage();
  const mainThread = () => threadCpuSeconds(process.pid, process.pid);
  const mainWaited = () => threadWaitSeconds(process.pid, process.pid);
  const main = mainThread();
  const waited = mainWaited();
  const started = performance.now();
  const result = await exportDay(runtime, day);
  const ms = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const mainMs = (mainThread() - main) * 1000;
  const mainWaitMs = (mainWaited() - waited) * 1000;
  await runtime.close();
  const maxRssMb = process.resourceUsage().maxRSS / 1024;
  const cpuMs = (used.user + used.system) / 1000;
  process.stdout.write(
    JSON.stringify({ ms, cpuMs, mainMs, mainWaitMs, maxRssMb, rows: result.counts.payments }),
  );
}

async function psqlCopy(day: string, file: string): Promise<number> {
  const w = dayWindow(day, ZONE);
  const select =
    `SELECT id, reference, amount, description, status, transaction_type, phone, service_mobile_code, extra_data, ` +
    `created_at, updated_at, organization_id, api_key_id FROM reporting.payments ` +
    `WHERE created_at >= '${w.start.toISOString()}' AND created_at < '${w.end.toISOString()}' ORDER BY created_at, id`;
  const started = performance.now();
  await promisify(execFile)('psql', [
    '-X',
    '-q',
    '-d',
    URL_,
    '-c',
    `\\copy (${select}) TO '${file}' WITH (FORMAT csv, HEADER)`,
  ]);
  return performance.now() - started;
}

interface Figures {
  n: number;
  ms: number;
  cpuMs: number;
  /** The export's main thread's CPU. */
  mainMs: number;
  /** How long the main thread was ready to run but waited for a core. */
  mainWaitMs: number;
  /** CPU of the export's PostgreSQL backends. */
  pgCpuMs: number;
  copyMs: number;
  /** CPU of psql and of its PostgreSQL backend. */
  copyCpuMs: number;
  rss: number;
  boundedRss: number;
}

/** CPU (ms) of this process's reaped children (psql, the export's child) so far. */
const childrenCpuMs = () => (processCpuSeconds(process.pid, true) - processCpuSeconds(process.pid)) * 1000;

/**
 * Runs `work` and returns its result with the CPU (ms) of the bench database's PostgreSQL backends
 * meanwhile, sampled often: the export's connections live a second or two.
 */
async function withBackendCpu<T>(work: () => Promise<T>): Promise<[T, number]> {
  const { result, postgresOwn } = await withDatabaseCpu(URL_, work, 20);
  return [result, postgresOwn * 1000];
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/** Rows for bench/run.ts: the whole export against `psql \copy` at 100k, and peak memory 200k vs 20k. */
function tableRows(f: Figures[]) {
  const [small, mid, large] = f as [Figures, Figures, Figures];
  return [
    {
      scenario: `export with pack.xlsx, ${mid.n}-payment day`,
      paysync: `${seconds(mid.ms)} (CPU ${seconds(mid.cpuMs)})`,
      baseline: `psql \\copy ${seconds(mid.copyMs)}`,
      ratio: mid.ms / mid.copyMs,
      goal: '<= 3x',
      met: mid.ms / mid.copyMs <= 3,
      rssMb: mid.rss,
    },
    {
      scenario: `export's CPU with its PostgreSQL backends, ${mid.n}-payment day`,
      paysync: `${seconds(mid.cpuMs + mid.pgCpuMs)} (export ${seconds(mid.cpuMs)}, its main thread ${seconds(mid.mainMs)}, which waited ${seconds(mid.mainWaitMs)} for a core; PostgreSQL ${seconds(mid.pgCpuMs)})`,
      baseline: `psql \\copy ${seconds(mid.copyCpuMs)} of CPU`,
      ratio: (mid.cpuMs + mid.pgCpuMs) / mid.copyCpuMs,
      goal: `wall time at best: this CPU over ${cpus().length} cores = ${((mid.cpuMs + mid.pgCpuMs) / cpus().length / mid.copyMs).toFixed(2)}x the copy's`,
      met: null,
    },
    {
      scenario: `export with pack.xlsx, ${large.n}-payment day`,
      paysync: `${seconds(large.ms)} (CPU ${seconds(large.cpuMs)})`,
      baseline: `psql \\copy ${seconds(large.copyMs)}`,
      ratio: large.ms / large.copyMs,
      goal: 'for scale (no goal)',
      met: null,
      rssMb: large.rss,
    },
    {
      scenario: `export memory, ${large.n} vs ${small.n}`,
      paysync: `${large.rss} MB`,
      baseline: `${small.rss} MB`,
      ratio: large.rss / small.rss,
      goal: 'flat (<= 1.3x)',
      met: large.rss / small.rss <= 1.3,
    },
    {
      scenario: `export memory, heap 128 MB, ${large.n} vs ${small.n}`,
      paysync: `${large.boundedRss} MB`,
      baseline: `${small.boundedRss} MB`,
      ratio: large.boundedRss / small.boundedRss,
      goal: 'flat (<= 1.3x)',
      met: large.boundedRss / small.boundedRss <= 1.3,
    },
  ];
}

interface ChildResult {
  ms: number;
  cpuMs: number;
  /** Of it, the main thread's. */
  mainMs: number;
  /** How long the main thread was ready to run but waited for a core. */
  mainWaitMs: number;
  maxRssMb: number;
  rows: number;
}

/** Runs one export in a child process: this build's, or with `script` another build's bench/export.js. */
async function runChild(
  day: string,
  exportDir: string,
  nodeOptions: string[] = [],
  script = fileURLToPath(import.meta.url),
): Promise<ChildResult> {
  // BENCH_CPU_PROF=DIR writes the export child's CPU profile there (node --cpu-prof).
  const profile = process.env.BENCH_CPU_PROF
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`]
    : [];
  const args = [...nodeOptions, ...profile, script, '--child', day, exportDir];
  try {
    const { stdout } = await promisify(execFile)(process.execPath, args, { encoding: 'utf8' });
    return JSON.parse(stdout);
  } catch (error) {
    throw new Error(`export child failed: ${(error as { stderr?: string }).stderr ?? String(error)}`);
  }
}

/** One round's export by one build: its figures and its backends' CPU. */
interface AbRun extends ChildResult {
  pgCpuMs: number;
}

/**
 * `--base DIR`: the base build's export and this one's of the 100k-payment day, `rounds` times in
 * alternating order (base first in odd rounds), a `psql \copy` of the same rows before each round; prints
 * every run and the medians. A build older than the main thread's wait figure prints it as "-".
 */
async function compareBuilds(baseDist: string, rounds: number, work: string): Promise<void> {
  const [day, n] = SIZES[1] as [string, number];
  const base = join(baseDist, 'bench', 'export.js');
  const runs: Record<'base' | 'this', AbRun[]> = { base: [], this: [] };
  const copies: number[] = [];
  const line = (who: string, r: AbRun) =>
    `  ${who.padEnd(5)} ${(r.ms / 1000).toFixed(2)} s, CPU ${(r.cpuMs / 1000).toFixed(2)} s (main thread ` +
    `${(r.mainMs / 1000).toFixed(2)} s, waited ${r.mainWaitMs === undefined ? '-' : (r.mainWaitMs / 1000).toFixed(2)} s), ` +
    `PostgreSQL ${(r.pgCpuMs / 1000).toFixed(2)} s, peak RSS ${r.maxRssMb.toFixed(0)} MB`;
  await psqlCopy(day, join(work, 'warm.csv'));
  for (let round = 1; round <= rounds; round++) {
    const copyMs = await psqlCopy(day, join(work, `copy-${round}.csv`));
    copies.push(copyMs);
    console.log(`round ${round}: psql \\copy ${(copyMs / 1000).toFixed(2)} s`);
    const order: Array<'base' | 'this'> = round % 2 ? ['base', 'this'] : ['this', 'base'];
    for (const who of order) {
      const dir = join(work, `ab-${who}-${round}`); // a fresh folder: a first version every time
      const [r, pgCpuMs] = await withBackendCpu(() =>
        who === 'base' ? runChild(day, dir, [], base) : runChild(day, dir),
      );
      if (r.rows !== n) throw new Error(`${who}: exported ${r.rows} rows, expected ${n}`);
      runs[who].push({ ...r, pgCpuMs });
      console.log(line(who, { ...r, pgCpuMs }));
    }
  }
  const copy = median(copies);
  console.log(`medians of ${rounds} rounds, ${n} payments; psql \\copy ${(copy / 1000).toFixed(2)} s:`);
  for (const who of ['base', 'this'] as const) {
    const ms = median(runs[who].map((r) => r.ms));
    const cpu = median(runs[who].map((r) => r.cpuMs + r.pgCpuMs));
    console.log(
      `  ${who.padEnd(5)} ${(ms / 1000).toFixed(2)} s (${(ms / copy).toFixed(2)}x the copy), ` +
        `CPU with its backends ${(cpu / 1000).toFixed(2)} s`,
    );
  }
  const ratio = median(runs.this.map((r) => r.ms)) / median(runs.base.map((r) => r.ms));
  console.log(`  this build / base: ${ratio.toFixed(2)}x the wall time`);
}

async function main(): Promise<void> {
  const baseDist = textArg('--base');
  await dropBenchDatabase(URL_);
  await migrate(URL_);
  const pool = createPool(URL_);
  const work = await mkdtemp(join(tmpdir(), 'paysync-bench-export-'));
  try {
    for (const [day, n] of baseDist ? [SIZES[1] as [string, number]] : SIZES)
      await insertSyntheticDay(pool, day, ZONE, n);
    await pool.query('VACUUM ANALYZE reporting.payments');
    if (baseDist) {
      await compareBuilds(baseDist, wholeArg('--rounds', 8), work);
      return;
    }
    console.log(
      `(load average at start: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}, ${cpus().length} cores)`,
    );
    console.log(
      'rows     export (ms)  export CPU (ms)  main thread (ms)  main waited (ms)  its PostgreSQL CPU (ms)  psql \\copy (ms)  copy CPU (ms)  export/copy  peak RSS (MB)  heap 128 MB',
    );
    const figures: Figures[] = [];
    for (const [day, n] of SIZES) {
      await psqlCopy(day, join(work, `warm-${day}.csv`)); // warm the cache for both
      const psqlBefore = childrenCpuMs();
      const [copyMs, copyPgCpu] = await withBackendCpu(() => psqlCopy(day, join(work, `${day}.csv`)));
      const copyCpuMs = copyPgCpu + childrenCpuMs() - psqlBefore;
      const [e, pgCpuMs] = await withBackendCpu(() => runChild(day, join(work, 'exports')));
      // a fresh folder: in the first one the day is unchanged and nothing would be written
      const bounded = await runChild(day, join(work, 'exports-bounded'), ['--max-old-space-size=128']);
      if (e.rows !== n || bounded.rows !== n) throw new Error(`exported ${e.rows} rows, expected ${n}`);
      console.log(
        `${String(n).padEnd(8)} ${e.ms.toFixed(0).padStart(11)}  ${e.cpuMs.toFixed(0).padStart(15)}  ` +
          `${e.mainMs.toFixed(0).padStart(16)}  ${e.mainWaitMs.toFixed(0).padStart(16)}  ` +
          `${pgCpuMs.toFixed(0).padStart(23)}  ${copyMs.toFixed(0).padStart(15)}  ` +
          `${copyCpuMs.toFixed(0).padStart(13)}  ${(e.ms / copyMs).toFixed(2).padStart(11)}  ` +
          `${e.maxRssMb.toFixed(0).padStart(13)}  ${bounded.maxRssMb.toFixed(0).padStart(11)}`,
      );
      figures.push({
        n,
        ms: e.ms,
        cpuMs: e.cpuMs,
        mainMs: e.mainMs,
        mainWaitMs: e.mainWaitMs,
        pgCpuMs,
        copyMs,
        copyCpuMs,
        rss: Math.round(e.maxRssMb),
        boundedRss: Math.round(bounded.maxRssMb),
      });
    }
    console.log(
      `(load average at end: ${loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')})`,
    );
    if (JSON_ROWS) console.log(JSON.stringify(tableRows(figures)));
  } finally {
    await pool.end();
    await rm(work, { recursive: true, force: true });
    await dropBenchDatabase(URL_);
  }
}

if (process.argv[2] === '--child') await child(process.argv[3] as string, process.argv[4] as string);
else await main();
