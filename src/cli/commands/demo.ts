/**
 * `paysync demo` / `npm run demo`: the whole pipeline on the embedded default, with no setting needed —
 * the simulator on a free loopback port, a `paysync_demo` database, a backfill of the simulator's days with
 * a progress bar, a live tick, then a summary and what to try next. Each run starts from an empty demo database (resetDemoState)
 * and an EXPORT_DIR emptied of the previous demo's packs (demo-exports.ts: a folder holding anything else is refused).
 */
import pg from 'pg';
import { parseSettings, type Settings } from '../../config/settings.js';
import { createLogger } from '../../log.js';
import { checkPostgres, connectRedis, createRuntime, type Runtime } from '../../runtime.js';
import { startSimulator } from '../../sim/server.js';
import type { RunningSimulator } from '../../sim/types.js';
import { planBackfill } from '../../sync/backfill.js';
import { failedItems, getBackfill, recordBackfill } from '../../warehouse/backfill-store.js';
import { enqueueBackfill } from '../../../jobs/backfill-queue.js';
import { tickPayments, tickTransfers } from '../../sync/tick.js';
import { daysBetween, localDayOf } from '../../sync/windows.js';
import { exportDay } from '../../reconcile/export-day.js';
import { reconcileDay } from '../../reconcile/reconcile.js';
import { resolve } from 'node:path';
import { migrate } from '../../warehouse/migrate.js';
import { startWorker } from '../../../jobs/start-worker.js';
import { createPool } from '../../warehouse/pool.js';
import { createProgressBar } from '../progress.js';
import { prepareDemoExports } from '../demo-exports.js';

const DEMO_KEY = 'demo-key-not-secret';
const DEMO_DAYS = 3;

function demoSettings(sim: RunningSimulator): Settings {
  const server = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/paysync');
  server.pathname = '/paysync_demo';
  return parseSettings({
    ...process.env,
    PAYSYNC_SOURCES_FILE: '',
    PAYMENTS_BASE_URL: sim.url,
    PAYMENTS_API_KEY: DEMO_KEY,
    DATABASE_URL: server.toString(),
    PAYSYNC_QUEUE_PREFIX: 'paysync-demo',
    UPSTREAM_RPS: '100',
    SYNC_START: localDayOf(
      new Date(sim.now().getTime() - DEMO_DAYS * 86_400_000),
      process.env.REPORT_TIMEZONE ?? 'UTC',
    ),
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    LOG_FORMAT: process.env.LOG_FORMAT ?? 'pretty',
  });
}

/**
 * Each run starts from an empty demo database and no demo keys in Redis: the dataset is anchored on the
 * day the demo runs, and one anchored on an earlier day would mix with it (reconcile would then rightly
 * find the old run's records). Only the demo's own database and key prefix are touched.
 */
async function resetDemoState(settings: Settings): Promise<void> {
  const server = new URL(settings.DATABASE_URL);
  const name = decodeURIComponent(server.pathname.slice(1));
  server.pathname = '/postgres';
  const admin = createPool(server.toString());
  try {
    await admin.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  } finally {
    await admin.end();
  }
  const redis = await connectRedis(settings.REDIS_URL, 'paysync-demo-reset');
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(
        cursor,
        'MATCH',
        `${settings.PAYSYNC_QUEUE_PREFIX}*`,
        'COUNT',
        500,
      );
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== '0');
  } finally {
    await redis.quit();
  }
}

async function checkServices(settings: Settings): Promise<void> {
  const redis = await connectRedis(settings.REDIS_URL, 'paysync-demo-check');
  await redis.quit();
  const pool = createPool(settings.DATABASE_URL);
  try {
    await checkPostgres(pool, settings.DATABASE_URL);
  } finally {
    await pool.end();
  }
}

export async function run(): Promise<number> {
  // Anchored on today's UTC midnight: re-running the demo the same day serves the same records, so the
  // demo warehouse converges instead of collecting a new dataset on every run. The clock stands still, so
  // the reconcile that follows compares the warehouse with exactly what was synced.
  // The anchor moves an hour after UTC midnight, not at it: the last day packed must have ended longer
  // ago than SETTLE_LAG by the wall clock that stamps the sync log, or its pack finds it not yet covered
  // (seen at 00:00:25 UTC: the demo failed with DAY_NOT_COVERED).
  const anchor = new Date(Math.floor((Date.now() - 3_600_000) / 86_400_000) * 86_400_000);
  const sim = await startSimulator({
    seed: 42,
    days: DEMO_DAYS,
    perDay: 300,
    apiKeys: [DEMO_KEY],
    now: anchor,
    clock: 'manual',
  });
  try {
    const settings = demoSettings(sim);
    await checkServices(settings);
    await resetDemoState(settings);
    await prepareDemoExports(settings.EXPORT_DIR);
    const say = (line: string) => process.stdout.write(`${line}\n`);
    say(`simulator: ${sim.url} (${DEMO_DAYS} days of seeded payments and transfers)`);
    const migrated = await migrate(settings.DATABASE_URL, { log: createLogger({ level: 'warn' }) });
    say(`warehouse: ${settings.DATABASE_URL} (${migrated.applied.length} migration(s) applied now)`);
    const runtime = await createRuntime(settings, { name: 'paysync-demo' });
    try {
      await backfill(runtime, sim);
      const deps = runtime.syncContext(settings.sources[0]!);
      const tick = await tickPayments(deps);
      const transfers = await tickTransfers(deps);
      say(
        `live tick: ${tick.windows.length} window(s), checkpoint ${tick.checkpoint?.toISOString() ?? 'none'}; transfers ${transfers?.outcome ?? 'not due'}`,
      );
      const packs = await packsAndReconcile(runtime, sim, say);
      await summary(runtime, say, packs);
    } finally {
      await runtime.close();
    }
    return 0;
  } finally {
    await sim.stop();
  }
}

/** The demo's backfill, recorded in PostgreSQL like `paysync backfill`'s (the status page shows it). */
async function backfill(runtime: Runtime, sim: RunningSimulator): Promise<void> {
  const { settings } = runtime;
  const zone = settings.REPORT_TIMEZONE;
  const from = settings.SYNC_START as string;
  const to = localDayOf(sim.now(), zone);
  const streams = ['payments', 'transfers'] as const;
  const jobs = planBackfill(settings, settings.sources, from, to, [...streams]);
  const request = {
    sources: settings.sources.map((s) => s.name),
    streams: [...streams],
    fromDay: from,
    toDay: to,
    timeZone: zone,
  };
  const worker = await startWorker(runtime, { schedules: false, concurrency: 2 });
  try {
    // recorded once the worker runs, so its start finds no item Redis lacks (a re-fill would warn)
    const { backfill: recorded } = await recordBackfill(runtime.pool, request, jobs);
    await enqueueBackfill(worker.queue, jobs, recorded.id);
    const bar = createProgressBar(`backfill #${recorded.id} ${from} → ${to}`, process.stdout);
    for (;;) {
      const b = await getBackfill(runtime.pool, recorded.id);
      if (!b) throw new Error(`backfill #${recorded.id} is no longer recorded in PostgreSQL`);
      bar.update(b.done + b.failed, b.total, `records ${b.records}`);
      if (b.state !== 'running') {
        bar.finish();
        for (const f of await failedItems(runtime.pool, b.id))
          process.stdout.write(`  failed: ${f.label}: ${f.detail ?? 'no detail'}\n`);
        break;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await worker.close();
  }
}

/** Each demo day's pack, then its reconcile against the simulator. Returns the days that mismatched. */
async function packsAndReconcile(
  runtime: Runtime,
  sim: RunningSimulator,
  say: (line: string) => void,
): Promise<number> {
  const zone = runtime.settings.REPORT_TIMEZONE;
  const days = daysBetween(
    runtime.settings.SYNC_START as string,
    localDayOf(new Date(sim.now().getTime() - 1), zone),
    zone,
  );
  let mismatched = 0;
  say('');
  say(`packs in ${resolve(runtime.settings.EXPORT_DIR)} and reconcile against the service:`);
  for (const day of days) {
    const pack = await exportDay(runtime, day, { now: sim.now() });
    const check = await reconcileDay(runtime, day);
    if (check.mismatches) mismatched += 1;
    say(
      `  ${day}  v${pack.version}${pack.unchanged ? ' (unchanged)' : ''}  ${pack.counts.payments} payments, ${pack.counts.transfers} transfers` +
        `  reconcile: ${check.mismatches ? `${check.mismatches} MISMATCH(ES)` : 'matches the service'}`,
    );
  }
  return mismatched;
}

async function summary(runtime: Runtime, say: (line: string) => void, mismatchedDays: number): Promise<void> {
  const { rows } = await runtime.pool.query<{ stream: string; status: string; n: number; amount: string }>(
    `SELECT 'payments' AS stream, status, count(*) AS n, sum(amount)::text AS amount FROM reporting.payments GROUP BY status
     UNION ALL
     SELECT 'transfers', status, count(*), sum(amount)::text FROM reporting.transfers GROUP BY status
     ORDER BY 1, 2`,
  );
  say('');
  say('records in the warehouse:');
  for (const r of rows)
    say(`  ${r.stream.padEnd(9)} ${r.status.padEnd(8)} ${String(r.n).padStart(6)}  amount ${r.amount}`);
  const db = runtime.settings.DATABASE_URL;
  say('');
  say('try next:');
  say(`  psql ${db} -c "SELECT * FROM reporting.daily_totals ORDER BY day DESC, stream, status LIMIT 20"`);
  say(
    `  DATABASE_URL=${db} PAYSYNC_QUEUE_PREFIX=paysync-demo PAYMENTS_BASE_URL=http://127.0.0.1:1 PAYMENTS_API_KEY=x npx paysync status`,
  );
  say(
    `  ls ${resolve(runtime.settings.EXPORT_DIR)}/*/  and open a day's payments.csv, summary.csv and manifest.json`,
  );
  if (mismatchedDays) say(`\n${mismatchedDays} day(s) did not reconcile: see the lines above`);
}
