/**
 * Idle tick: with a history already synced and nothing new, one live tick. Its cost should follow the
 * lookback and the unsettled days, not the size of the history. The simulator serves the same number of
 * payments per day at both sizes; only the number of days differs.
 */
import { parseSettings } from '../../src/config/settings.js';
import { silentLogger } from '../../src/log.js';
import { createRuntime } from '../../src/runtime.js';
import { tickPayments } from '../../src/sync/tick.js';
import { benchEnv, runBackfill, withSimAndDatabase } from './backfill.js';

export interface IdleTickFigures {
  history: number;
  seconds: number;
  requests: number;
  windows: number;
  revisits: number;
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
      // steady state: the live checkpoint is near now, as after the previous tick
      await runtime.checkpoints.reset('default', 'payments', new Date(Date.now() - 120_000));
      const deps = runtime.syncContext(runtime.settings.sources[0]!);
      const started = process.hrtime.bigint();
      const report = await tickPayments(deps);
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      return {
        history: filled.rows,
        seconds,
        requests,
        windows: report.windows.length,
        revisits: report.revisits.length,
      };
    } finally {
      const keys = await runtime.redis.keys(`${runtime.settings.PAYSYNC_QUEUE_PREFIX}*`);
      if (keys.length) await runtime.redis.del(...keys);
      await runtime.close();
    }
  });
}
