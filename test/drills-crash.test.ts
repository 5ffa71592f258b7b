/**
 * The crash soak, short: two seeded runs of bench/soak-run.ts (the full soak is `node dist/bench/soak.js
 * --runs 20`). Worker processes are killed with SIGKILL mid-backfill and replaced, an export is killed in
 * some runs and run again; the warehouse must equal the simulator record by record, nothing doubled, and
 * the day's pack whole as its manifest names it. Needs the build (npm test builds before jest).
 */
import { describe, expect, it } from '@jest/globals';
import { describeRun, soakRun } from '../bench/soak-run.js';

describe('crash soak (short)', () => {
  // The export is paused at a named point and killed there on its own announcement (no sleep decides it).
  it.each([
    [101, 'export:after-rename' as const],
    [102, false as const],
  ])(
    'seed %i: workers (and an export, at %s) killed with SIGKILL lose nothing and double nothing',
    async (seed, killExport) => {
      const result = await soakRun({ seed, days: 3, perDay: 150, timeoutMs: 25_000, killExport });
      process.stderr.write(`${describeRun(result)}\n`);
      expect(result.problems).toEqual([]);
      expect(result.workerKills).toBeGreaterThan(0);
      expect(result.exportKilledAt).toBe(killExport || undefined);
      expect(result.matched).toBe(true);
    },
    30_000,
  );
});
