/**
 * Every view of sync health tells the same truth in every phase, against the simulator's outage switch:
 * `paysync status`, the status page and /metrics' phase gauge show one phase per stream (decided once,
 * src/ops/status-health.ts). A migrated database that never synced says `never synced` (exit 1) with a lag
 * series counted from the sync start; while the service answers only 503, or resets or refuses every
 * connection, "last success" stays where it was, the last error is shown, and both streams are `down`;
 * `sync --once` on a fresh database against a down service exits 1 and leaves no success behind.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { PaysyncMetrics } from '../../src/ops/metrics.js';
import { gatherStatus, type StatusData } from '../../src/ops/status-data.js';
import { renderStatusPage } from '../../src/ops/status-page.js';
import type { Outage } from '../../src/sim/types.js';
import { MAX_PROBE_GAP_TICKS, readCircuit } from '../../src/sync/circuit.js';
import { runTick } from '../../src/sync/run-work.js';
import { runCli, harnessEnv } from '../helpers/cli-run.js';
import { sample } from '../helpers/ops.js';
import { startHarness, type Harness } from '../helpers/sync-harness.js';

const STREAMS = ['payments', 'transfers'] as const;
/** What the last error says of each outage. */
const SAYS: Record<string, RegExp> = {
  unavailable: /the service answered 503/,
  reset: /ECONNRESET/,
  refused: /ECONNREFUSED/,
};
let h: Harness | null = null;
afterAll(async () => {
  await h?.close();
});

async function fresh(name: string): Promise<Harness> {
  await h?.close();
  h = await startHarness({ name });
  return h;
}

function status(x: Harness): Promise<StatusData> {
  return gatherStatus({
    pool: x.runtime.pool,
    checkpoints: x.runtime.checkpoints,
    sources: x.settings.sources,
    settings: x.settings,
    queue: { getJobCounts: async () => ({}) },
    circuits: (name) => readCircuit(x.runtime.redis, x.settings.PAYSYNC_QUEUE_PREFIX, name),
    now: () => x.sim.now(),
  });
}

/** The phase of each stream as each view shows it: the CLI's JSON, the page's markup, the metric gauge. */
async function phasesEverywhere(x: Harness) {
  const data = await status(x);
  const metrics = new PaysyncMetrics();
  const text = await metrics.render(async () => data);
  const html = renderStatusPage({
    status: data,
    reconcile: [],
    generatedAt: x.sim.now(),
    queuesPath: '/queues',
    reconcileDays: 14,
  });
  const cli = await runCli(['status', '--json'], cliEnv(x));
  const json = JSON.parse(cli.stdout) as {
    phase: string;
    streams: Array<{
      stream: string;
      lastSuccessAt: string | null;
      lastError: string | null;
      health: { phase: string };
    }>;
  };
  const views = STREAMS.map((stream) => {
    const gauge = ['healthy', 'catching_up', 'never_synced', 'degraded', 'down'].filter(
      (p) => sample(text, 'paysync_health_phase', { source: 'default', stream, phase: p }) === 1,
    );
    const page = new RegExp(`data-stream="${stream}" data-phase="([^"]+)"`).exec(html)?.[1];
    const fromCli = json.streams.find((s) => s.stream === stream)?.health.phase;
    return { stream, cli: fromCli, page, metric: gauge.map((p) => p.replace('_', ' ')) };
  });
  return { views, exit: cli.status, json, text, data };
}

function cliEnv(x: Harness): Record<string, string> {
  return harnessEnv(x, {
    SYNC_START: x.settings.SYNC_START ?? '',
    UPSTREAM_RETRIES: '1',
    REDIS_URL: x.settings.REDIS_URL,
  });
}

function expectAll(views: Awaited<ReturnType<typeof phasesEverywhere>>['views'], phase: string): void {
  expect(views).toEqual(STREAMS.map((stream) => ({ stream, cli: phase, page: phase, metric: [phase] })));
}

/** One tick of each stream, then the simulated clock moves on by SYNC_EVERY (the next tick's time). */
async function tickBoth(x: Harness): Promise<void> {
  const deps = x.runtime.syncContext(x.settings.sources[0]!);
  for (const stream of STREAMS) await runTick(deps, stream).catch(() => undefined);
  x.sim.advance(x.settings.SYNC_EVERY);
}

describe('health phases, one truth in every view', () => {
  it('a migrated database that never synced: never synced (exit 1), lag counted from the sync start', async () => {
    const x = await fresh('phasenever');
    const seen = await phasesEverywhere(x);
    expectAll(seen.views, 'never synced');
    expect(seen.exit).toBe(1);
    expect(seen.json.phase).toBe('never synced');
    const lag = sample(seen.text, 'paysync_sync_lag_seconds', { source: 'default', stream: 'payments' });
    const start = Date.parse(`${x.settings.SYNC_START}T00:00:00Z`);
    expect(lag).toBe(Math.round((x.sim.now().getTime() - start) / 1000));
    expect(lag).toBeGreaterThan(1800); // PaysyncSyncLagging can fire
  });

  for (const outage of ['unavailable', 'reset', 'refused'] as Outage[]) {
    it(`the service ${outage}: last success stays, the last error shows, both streams down; then healthy`, async () => {
      const x = await fresh(`phase${outage}`);
      await tickBoth(x);
      const before = await status(x);
      expect(before.streams.map((s) => s.lastSuccessAt)).not.toContain(null);
      expectAll((await phasesEverywhere(x)).views, 'healthy');

      x.sim.setSwitches({ outage });
      await tickBoth(x);
      await tickBoth(x);
      const down = await phasesEverywhere(x);
      expectAll(down.views, 'down');
      expect(down.exit).toBe(1);
      for (const s of down.data.streams) {
        const was = before.streams.find((b) => b.stream === s.stream)!;
        expect({ stream: s.stream, lastSuccessAt: s.lastSuccessAt }).toEqual({
          stream: was.stream,
          lastSuccessAt: was.lastSuccessAt,
        });
        // the service's own failure, named (through the circuit once it opened)
        expect(s.lastError).toMatch(SAYS[outage] ?? /./);
        const gauge = sample(down.text, 'paysync_last_successful_tick_timestamp_seconds', {
          source: 'default',
          stream: s.stream,
        });
        expect(gauge).toBe(Date.parse(was.lastSuccessAt!) / 1000);
      }

      // back: the circuit's next due probe finds the service, and the tick that probed syncs
      x.sim.setSwitches({ outage: 'none' });
      for (let ticks = 0; (await status(x)).streams.some((st) => st.circuit || st.lastErrorAt); ticks++) {
        expect(ticks).toBeLessThanOrEqual(MAX_PROBE_GAP_TICKS + 1);
        await tickBoth(x);
      }
      expectAll((await phasesEverywhere(x)).views, 'healthy');
    });
  }

  it('sync --once on a fresh database against a down service exits 1; status then shows no success', async () => {
    const x = await fresh('phaseoncedown');
    x.sim.setSwitches({ outage: 'unavailable' });
    const once = await runCli(['sync', '--once'], cliEnv(x));
    expect(once.status).toBe(1);
    const seen = await phasesEverywhere(x);
    expectAll(seen.views, 'down');
    for (const s of seen.json.streams) {
      expect(s.lastSuccessAt).toBeNull();
      expect(s.lastError).toMatch(/the service answered 503/);
    }
  });
});
