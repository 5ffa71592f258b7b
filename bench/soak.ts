/**
 * The crash soak (not part of npm test; a 2-run version is test/drills/crash-loop.test.ts):
 *   npm run build && node dist/bench/soak.js [--runs 20] [--seed-base N]
 * Each run uses its own simulator seed, database, queue prefix and export folder, kills workers (and in
 * some runs an export) with SIGKILL at seeded named pause points where it hurts most, and checks that the
 * backfill ends done on its own and the warehouse equals the simulator record by record (see
 * soak-run.ts). Needs PostgreSQL and Redis, like the benchmarks.
 * Exits 0 only when every run matched.
 */
import { parseArgs } from 'node:util';
import { describeRun, soakRun } from './soak-run.js';

function wholeNumber(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n < 0) {
    process.stderr.write(`soak: --${name} must be a whole number (got "${text}")\n`);
    process.exit(2);
  }
  return n;
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: { runs: { type: 'string' }, 'seed-base': { type: 'string' } },
  });
  const runs = wholeNumber('runs', values.runs, 20);
  const seedBase = wholeNumber('seed-base', values['seed-base'], 1);
  let matched = 0;
  for (let i = 0; i < runs; i++) {
    const result = await soakRun({ seed: seedBase + i });
    if (result.matched) matched++;
    process.stdout.write(`${describeRun(result)}\n`);
  }
  process.stdout.write(`soak: ${matched}/${runs} runs matched\n`);
  return matched === runs ? 0 : 1;
}

process.exitCode = await main();
