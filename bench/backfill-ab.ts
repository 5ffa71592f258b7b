/**
 * One backfill scenario, or two builds side by side: the A/B measurement for a change to the worker
 * (docs/benchmarks.md, "Comparing two builds"). With `--base DIR` (another checkout's `dist`, built
 * with `npx tsc -p tsconfig.build.json`), the base and this build run alternately, `--rounds` times each,
 * each on a fresh simulator and database, and the medians are printed; without it, this build only
 * (with BENCH_CPU_PROF=DIR, the worker's CPU profile is written there).
 *   npm run build && node dist/bench/backfill-ab.js --payments 200000 --rounds 3 --base /tmp/old/dist
 *   --shape array (bare-array responses), --page-cap 100
 *   --extra-fields canonical|exact: two fields the interface does not list on every payment (EXTRA_FIELDS)
 */
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { textArg, wholeArg } from './lib/args.js';
import { EXTRA_FIELDS, type BackfillFigures, type BackfillSpec } from './lib/backfill.js';
import { median } from './lib/median.js';

type BackfillModule = typeof import('./lib/backfill.js');

const payments = wholeArg('--payments', 200_000, 1000);
const rounds = wholeArg('--rounds', 3);
const shape = textArg('--shape') === 'array' ? 'array' : 'wrapper';
const pageCap = wholeArg('--page-cap', 0, 0); // 0: the service does not cap its pages
const base = textArg('--base');
const extra = textArg('--extra-fields');
if (extra !== undefined && extra !== 'canonical' && extra !== 'exact')
  throw new Error('--extra-fields takes canonical or exact');

const spec: BackfillSpec = {
  payments,
  days: 10,
  pageSize: 1000,
  workers: 1,
  concurrency: 2,
  shape,
  ...(pageCap > 0 ? { pageCap } : {}),
  ...(extra ? { extraFields: EXTRA_FIELDS[extra] } : {}),
};
// this file is dist/bench/backfill-ab.js: a build's module is <dist>/bench/lib/backfill.js
const here = dirname(fileURLToPath(import.meta.url));
const builds: Array<[string, string]> = [['this build', join(here, 'lib', 'backfill.js')]];
if (base) builds.unshift(['base', join(base, 'bench', 'lib', 'backfill.js')]);

const modules = new Map<string, BackfillModule>();
for (const [name, file] of builds) modules.set(name, (await import(file)) as BackfillModule);
const runs = new Map<string, BackfillFigures[]>();
for (let round = 1; round <= rounds; round++) {
  for (const [name, m] of modules) {
    const f = await m.withSimAndDatabase(spec, (sim, db) => m.runBackfill(spec, sim, db));
    runs.set(name, [...(runs.get(name) ?? []), f]);
    process.stdout.write(
      `round ${round} ${name.padEnd(10)} ${f.seconds.toFixed(2)} s, worker ${f.cpu.worker.toFixed(2)} s, ` +
        `PostgreSQL ${f.cpu.postgresOwn.toFixed(2)} s, simulator ${f.cpu.simulator.toFixed(2)} s of CPU, ` +
        `peak RSS ${f.peakRssMb} MB\n`,
    );
  }
}
for (const [name, fs] of runs) {
  process.stdout.write(
    `median ${name.padEnd(10)} ${median(fs.map((f) => f.seconds)).toFixed(2)} s, worker ` +
      `${median(fs.map((f) => f.cpu.worker)).toFixed(2)} s, PostgreSQL ` +
      `${median(fs.map((f) => f.cpu.postgresOwn)).toFixed(2)} s of CPU (${spec.payments} ${shape} payments` +
      `${extra ? `, two unknown fields (${extra})` : ''})\n`,
  );
}
process.exit(0);
