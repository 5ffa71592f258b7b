/**
 * Idle tick: with a history already synced and nothing new, one live tick. Its cost should follow what
 * can still change (records not final, within SETTLE_HORIZON) and the lookback, not the size of the
 * history. The simulator serves the same number of payments per day at both sizes; only the number of
 * days differs. The same tick is run from the same checkpoint, five times each way (the median kept): reading the
 * lookback's days in full (the baseline), then only as far as the evidence requires (src/sync/lookback.ts), after a probe has
 * measured the service (as a worker does at start).
 */
import { parseSettings } from '../../src/config/settings.js';
import { silentLogger } from '../../src/log.js';
import { probeAndRecord } from '../../src/probe/record.js';
import { createRuntime } from '../../src/runtime.js';
import { tickPayments } from '../../src/sync/tick.js';
import { benchEnv, runBackfill, withSimAndDatabase } from './backfill.js';

/** Ticks run of each kind; their median is reported. */
const TICKS = 5;

export interface TickFigures {
  seconds: number;
  requests: number;
  windows: number;
  revisits: number;
}

export interface IdleTickFigures {
  history: number;
  /** Payments not final, created within SETTLE_HORIZON: what can still change. */
  open: number;
  /** Days from the lookback's start to now. */
  lookbackDays: number;
  /** The lookback's days read in full. */
  inFull: TickFigures;
  /** Read as far as the evidence requires. */
  byEvidence: TickFigures;
}

export async function idleTick(perDay: number, days: number): Promise<IdleTickFigures> {
  const spec = { payments: perDay * days, days, pageSize: 1000, workers: 1, concurrency: 2 };
  return withSimAndDatabase(spec, async (sim, databaseUrl) => {
    const filled = await runBackfill(spec, sim, databaseUrl);
    const env = benchEnv(sim.url, databaseUrl, 1000);
    let requests = 0;
    const runtime = await createRuntime(parseSettings(env), {
      log: silentLogger,
      onResponse: () => (requests += 1),
    });
    try {
      const source = runtime.settings.sources[0]!;
      await probeAndRecord(runtime, source);
      const deps = runtime.syncContext(source);
      const tick = async (lookbackByEvidence: boolean): Promise<TickFigures & { from: Date }> => {
        // steady state: the live checkpoint is near now, as after the previous tick
        await runtime.checkpoints.reset('default', 'payments', new Date(Date.now() - 120_000));
        requests = 0;
        const started = process.hrtime.bigint();
        const report = await tickPayments({ ...deps, options: { ...deps.options, lookbackByEvidence } });
        return {
          seconds: Number(process.hrtime.bigint() - started) / 1e9,
          requests,
          windows: report.windows.length,
          revisits: report.revisits.length,
          from: report.from,
        };
      };
      // each tick TICKS times, the median kept: one tick is a tenth of a second, within a shared machine's noise
      const median = async (lookbackByEvidence: boolean) => {
        const runs: Array<TickFigures & { from: Date }> = [];
        for (let i = 0; i < TICKS; i++) runs.push(await tick(lookbackByEvidence));
        return runs.sort((a, b) => a.seconds - b.seconds)[Math.floor(TICKS / 2)]!;
      };
      const inFull = await median(false);
      const byEvidence = await median(true);
      const { rows } = await runtime.pool.query<{ open: number }>(
        `SELECT count(*)::int AS open FROM reporting.payments
          WHERE status NOT IN ('COMPLETE', 'FAILED', 'TIMEOUT') AND created_at >= now() - $1 * interval '1 millisecond'`,
        [runtime.settings.SETTLE_HORIZON],
      );
      return {
        history: filled.rows,
        open: rows[0]?.open ?? 0,
        lookbackDays: (Date.now() - byEvidence.from.getTime()) / 86_400_000,
        inFull,
        byEvidence,
      };
    } finally {
      const keys = await runtime.redis.keys(`${runtime.settings.PAYSYNC_QUEUE_PREFIX}*`);
      if (keys.length) await runtime.redis.del(...keys);
      await runtime.close();
    }
  });
}
