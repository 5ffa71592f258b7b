/**
 * Generative (fast-check): sequences of what a service may do within its interface — list records twice,
 * serve pages past its end, cycle, trickle, send a total no list can have or times no record can have,
 * change list shape, go down (503s or reset connections) — each for a tick, against the simulator over
 * real HTTP with PostgreSQL and Redis. After every tick:
 * - no tick throws past its job: a tick returns, or fails with one of paysync's own error codes;
 * - every window run is complete on evidence or has its sync-log row with a reason code;
 * - every record of a window read complete lands with the state the service shows now (records sent
 *   with an impossible time aside: those are quarantined);
 * - during an outage the service gets at most the circuit's bound of requests per tick.
 * At the end, once the service behaves, everything it lists lands within a few ticks.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { RETRY_BY_CODE } from '../../src/error-codes.js';
import { PaysyncError } from '../../src/errors.js';
import { DEFAULT_SWITCHES, EPOCH, FAR_FUTURE, FAR_PAST } from '../../src/sim/switches.js';
import type { SimSwitches } from '../../src/sim/types.js';
import { OPEN_AFTER_FAILURES } from '../../src/sync/circuit.js';
import { runTick } from '../../src/sync/run-work.js';
import {
  paymentDifferences,
  startHarness,
  transferDifferences,
  type Harness,
} from '../helpers/sync-harness.js';

const RUNS = 24;
const MINUTE = 60_000;

type Behaviour =
  | { kind: 'clean' }
  | { kind: 'duplicates'; offset: number }
  | { kind: 'past-end'; how: 'wrap' | 'repeat-last' }
  | { kind: 'cycle' }
  | { kind: 'trickle' }
  | { kind: 'total'; total: number }
  | { kind: 'times'; picks: Array<[number, string, 'createdAt' | 'updatedAt']> }
  | { kind: 'outage'; how: 'unavailable' | 'reset' };

interface Step {
  behaviour: Behaviour;
  shape: SimSwitches['shape'];
}

const behaviour: fc.Arbitrary<Behaviour> = fc.oneof(
  fc.constant({ kind: 'clean' as const }),
  fc.integer({ min: 1, max: 12 }).map((offset) => ({ kind: 'duplicates' as const, offset })),
  fc.constantFrom('wrap' as const, 'repeat-last' as const).map((how) => ({ kind: 'past-end' as const, how })),
  fc.constant({ kind: 'cycle' as const }),
  fc.constant({ kind: 'trickle' as const }),
  fc.constantFrom(3e9, -5, 42.5).map((total) => ({ kind: 'total' as const, total })),
  fc
    .array(
      fc.tuple(
        fc.nat({ max: 40 }),
        fc.constantFrom(FAR_FUTURE, FAR_PAST, EPOCH),
        fc.constantFrom('createdAt' as const, 'updatedAt' as const),
      ),
      { minLength: 1, maxLength: 3 },
    )
    .map((picks) => ({ kind: 'times' as const, picks })),
  fc.constantFrom('unavailable' as const, 'reset' as const).map((how) => ({ kind: 'outage' as const, how })),
);

const step: fc.Arbitrary<Step> = fc.record({
  behaviour,
  shape: fc.constantFrom<SimSwitches['shape']>('wrapper', 'array', 'alternate'),
});

/** The switches of a step (every other one at its default). */
function switchesOf(h: Harness, s: Step): Partial<SimSwitches> {
  const base: Partial<SimSwitches> = { ...DEFAULT_SWITCHES, shape: s.shape };
  const b = s.behaviour;
  switch (b.kind) {
    case 'clean':
      return base;
    case 'duplicates':
      return { ...base, duplicateRate: 0.15, duplicateOffset: b.offset };
    case 'past-end':
      return { ...base, pastEnd: b.how };
    case 'cycle':
      return { ...base, pageCycle: { after: 3, back: 1 } };
    case 'trickle':
      return { ...base, trickle: 1 };
    case 'total':
      return { ...base, totalOverride: b.total };
    case 'times': {
      const ids = h.sim.payments(h.org).map((p) => p.id);
      const overrides: SimSwitches['timestampOverrides'] = {};
      for (const [i, at, field] of b.picks) overrides[ids[i % ids.length]!] = { [field]: at };
      return { ...base, timestampOverrides: overrides };
    }
    case 'outage':
      return { ...base, outage: b.how };
  }
}

/** No tick throws past its job: it returns, or fails with one of paysync's own codes. */
async function tickBoth(h: Harness): Promise<void> {
  const deps = h.runtime.syncContext(h.settings.sources[0]!);
  for (const stream of ['payments', 'transfers'] as const) {
    try {
      await runTick(deps, stream);
    } catch (error) {
      expect(error).toBeInstanceOf(PaysyncError);
      expect(Object.keys(RETRY_BY_CODE)).toContain((error as PaysyncError).code);
    }
  }
}

interface WindowRow {
  window_start: Date;
  window_end: Date;
  outcome: string;
  reason_code: string | null;
  fetched_at: Date;
}

/** Every window run ends complete, or with a reason code that names why (never an unclassified one). */
async function checkRows(h: Harness): Promise<WindowRow[]> {
  const { rows } = await h.runtime.pool.query<WindowRow>(
    `SELECT window_start, window_end, outcome, reason_code, fetched_at FROM reporting.sync_windows
      WHERE stream = 'payments'`,
  );
  for (const r of rows) {
    if (r.outcome === 'complete') expect(r.reason_code).toBeNull();
    else expect(['UNCLASSIFIED', 'INTERNAL_ERROR', null]).not.toContain(r.reason_code);
  }
  return rows;
}

/** Every record of a window this tick read complete is held as the service shows it now. */
async function checkLanded(h: Harness, rows: readonly WindowRow[], at: Date, impossible: Set<string>) {
  const complete = rows.filter((r) => r.outcome === 'complete' && r.fetched_at.getTime() === at.getTime());
  const { rows: held } = await h.runtime.pool.query<{ id: string; status: string; updated_at: Date }>(
    `SELECT id, status, updated_at FROM reporting.payments`,
  );
  const byId = new Map(held.map((r) => [r.id, r]));
  for (const p of h.sim.payments(h.org)) {
    if (impossible.has(p.id)) continue;
    const t = Date.parse(p.createdAt);
    if (!complete.some((w) => t >= w.window_start.getTime() && t < w.window_end.getTime())) continue;
    const row = byId.get(p.id);
    expect(row ? [row.status, row.updated_at.toISOString()] : 'missing').toEqual([
      p.status,
      new Date(p.updatedAt).toISOString(),
    ]);
  }
}

/** An outage tick sends at most the circuit's opening attempts and a probe per stream. */
function checkOutageBound(h: Harness, before: number): void {
  const sent = h.sim.requestLog().length - before;
  expect(sent).toBeLessThanOrEqual(OPEN_AFTER_FAILURES + 2 * (Number(h.settings.UPSTREAM_RETRIES) + 1));
}

async function runSequence(steps: readonly Step[]): Promise<void> {
  const h = await startHarness({
    name: 'anomalies-gen',
    sim: { days: 2, perDay: 24 },
    env: { PAGE_SIZE: '5', UPSTREAM_RETRIES: '1', SYNC_EVERY: '5m', REVISIT_EVERY: '0s' },
  });
  try {
    for (const s of steps) {
      h.sim.setSwitches(switchesOf(h, s));
      h.sim.advance(5 * MINUTE);
      const before = h.sim.requestLog().length;
      const at = h.sim.now();
      await tickBoth(h);
      const rows = await checkRows(h);
      if (s.behaviour.kind === 'outage') checkOutageBound(h, before);
      const overridden = new Set(Object.keys(h.sim.switches().timestampOverrides));
      await checkLanded(h, rows, at, overridden);
    }
    // the service behaves again: everything it lists lands within a few ticks (the circuit's probe first)
    h.sim.setSwitches({ ...DEFAULT_SWITCHES });
    for (let i = 0; i < 4; i++) {
      h.sim.advance(5 * MINUTE);
      await tickBoth(h);
    }
    await checkRows(h);
    expect(await paymentDifferences(h)).toEqual([]);
    expect(await transferDifferences(h)).toEqual([]);
  } finally {
    await h.close();
  }
}

describe('whatever the service does within its interface, no day stalls in silence', () => {
  it(`holds over ${RUNS} drawn sequences of odd behaviours and outages`, async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 4 }), (steps) => runSequence(steps)),
      { numRuns: RUNS, endOnFailure: true },
    );
  }, 600_000);
});
