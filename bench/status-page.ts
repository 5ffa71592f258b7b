/**
 * `npm run build && nice -n 10 node dist/bench/status-page.js [--rounds 5] [--per-day 2000]`: how long
 * GET /status takes with a year of history, beside a week of history and beside the old tables-only page,
 * in the same run. Two throw-away databases (paysync_bench_status_*; dropped at the end) are filled in SQL
 * with what a year of running paysync leaves: 365 days of payments and transfers (PER_DAY a day), the
 * sync log of live sync every 5 minutes (a payments window per day re-read, split in 24 parts, and a
 * transfers scan row per tick: 105,000 a year), a pack version and a reconcile run per day with its
 * records, quarantined records, and finished backfills; the queue holds a day of tick results (576 jobs).
 * The history is inserted in SQL rather than made by paysync's own paths because a year of it cannot be
 * made by running paysync for a year; its shapes follow what those paths write (the sync log's rows, the
 * manifests' fields, a reconcile run's rows and records). `--parts` also prints each gathering's time.
 * Each round requests every variant once, alternating; figures are medians over the rounds.
 */
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import type { Queue } from 'bullmq';
import { Worker } from 'bullmq';
import pg from 'pg';
import { createQueue } from '../jobs/queue.js';
import { parseSettings } from '../src/config/settings.js';
import { silentLogger } from '../src/log.js';
import { dashboardApp } from '../src/ops/dashboard.js';
import { listen, type RunningServer } from '../src/ops/http-server.js';
import { gatherStatus } from '../src/ops/status-data.js';
import { gatherStatusPage } from '../src/ops/status-gather.js';
import { gatherCalendar } from '../src/ops/status-calendar.js';
import { gatherHistory } from '../src/ops/status-history.js';
import { gatherBackfills } from '../src/ops/status-backfills.js';
import { migrate } from '../src/warehouse/migrate.js';
import { createRuntime, type Runtime } from '../src/runtime.js';
import { dropBenchDatabase } from './bench-db.js';
import { wholeArg } from './lib/args.js';

const say = (line: string) => process.stdout.write(`${line}\n`);
const rounds = wholeArg('--rounds', 5);
const perDay = wholeArg('--per-day', 2_000);

/** A warehouse as `days` days of paysync leave it (UTC days ending today). */
async function fill(url: string, days: number): Promise<void> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  const q = (sql: string, values: unknown[] = []) => db.query(sql, values);
  try {
    await q(
      `INSERT INTO reporting.payments (id, reference, amount, description, status, transaction_type, phone,
         service_mobile_code, created_at, updated_at, organization_id, api_key_id, source)
       SELECT 'p' || n, 'ref' || n, round((random() * 100000)::numeric, 2), 'bench',
              CASE WHEN t > now() - interval '2 days' AND n % 7 = 0 THEN 'PENDING' ELSE 'COMPLETE' END,
              'MOBILE_MONEY', '+22990000000', CASE n % 2 WHEN 0 THEN 'MTN' ELSE 'MOOV' END, t, t, 'org', 'key', 'default'
         FROM generate_series(0, $1::int * $2::int - 1) n,
              LATERAL (SELECT now() - (n::float8 / $2 * interval '1 day') AS t) x`,
      [days, perDay],
    );
    await q(
      `INSERT INTO reporting.transfers (id, reference, amount, name, phone, service_mobile_code, status,
         created_at, updated_at, source, organization_id)
       SELECT 't' || n, 'tref' || n, round((random() * 100000)::numeric, 2), 'bench', '+22990000000', 'MTN',
              'COMPLETE', t, t, 'default', 'org'
         FROM generate_series(0, $1::int * 100 - 1) n,
              LATERAL (SELECT now() - (n::float8 / 100 * interval '1 day') AS t) x`,
      [days],
    );
    // payments: each day's window in 24 parts, last re-read after the day ended; transfers: a scan a tick
    await q(
      `INSERT INTO reporting.sync_windows (source, stream, window_start, window_end, kind, fetched_at, records,
         pages, outcome, first_fetched_at)
       SELECT 'default', 'payments', d + h * interval '1 hour', d + (h + 1) * interval '1 hour', 'live',
              least(now(), d + interval '1 day 3 minutes'), $2::int / 24, 1, 'complete', d + interval '1 hour'
         FROM generate_series(date_trunc('day', now()) - ($1::int - 1) * interval '1 day', date_trunc('day', now()), interval '1 day') d,
              generate_series(0, 23) h
       UNION ALL
       SELECT 'default', 'transfers', to_timestamp(0), s, 'live', s + interval '5 seconds', 3, 1, 'complete', s
         FROM generate_series(now() - $1::int * interval '1 day', now() - interval '3 minutes', interval '5 minutes') s`,
      [days, perDay],
    );
    await q(
      `INSERT INTO reporting.export_versions (day, version, time_zone, generated_at, final, state, payments, transfers, manifest)
       SELECT d::date, v, 'UTC', d + interval '1 day 2 hours', v = 2, CASE v WHEN 2 THEN 'final' ELSE 'provisional' END,
              $2::int, 100,
              jsonb_build_object('stateReason', 'bench', 'totals', jsonb_build_object('payments', jsonb_build_object('records', $2::int, 'amount', '123.45')),
                'files', jsonb_build_object('payments', jsonb_build_object('path', 'payments.csv', 'rows', $2::int, 'sha256', md5(d::text))))
         FROM generate_series(date_trunc('day', now()) - $1::int * interval '1 day', date_trunc('day', now()) - interval '2 days', interval '1 day') d,
              generate_series(1, 2) v`,
      [days, perDay],
    );
    await q(
      `INSERT INTO reporting.reconcile_results (run_id, day, checked_at, source, stream, status, service, warehouse,
         difference, method, quarantined, unexplained)
       SELECT md5(d::text || r)::uuid, d::date, d + interval '1 day 1 hour' + r * interval '1 minute', 'default', st, s,
              100, 99, 1, 'count', 1, 0
         FROM generate_series(date_trunc('day', now()) - $1::int * interval '1 day', date_trunc('day', now()) - interval '1 day', interval '1 day') d,
              generate_series(1, 3) r, unnest(ARRAY['payments', 'transfers']) st, unnest(ARRAY['COMPLETE', 'FAILED', 'PENDING']) s`,
      [days],
    );
    await q(
      `INSERT INTO reporting.reconcile_records (run_id, day, source, stream, kind, record_id, reason)
       SELECT run_id, day, source, stream, 'quarantined', 'bad-' || run_id || '-' || k, 'amount: Invalid input'
         FROM (SELECT DISTINCT run_id, day, source, stream FROM reporting.reconcile_results) r, generate_series(1, 3) k`,
    );
    await q(
      `INSERT INTO reporting.sync_rejects (source, stream, record_id, raw, raw_hash, reason, first_seen_at)
       SELECT 'default', 'payments', 'bad' || n, '{}'::jsonb, md5(n::text), 'amount: Invalid input',
              now() - n * interval '1 hour' FROM generate_series(1, 2000) n`,
    );
    await q(
      `WITH b AS (
         INSERT INTO reporting.backfills (sources, streams, from_day, to_day, time_zone, state, finished_at)
         SELECT ARRAY['default'], ARRAY['payments'], current_date - 30 * k - 29, current_date - 30 * k, 'UTC', 'done', now() - k * interval '1 day'
           FROM generate_series(1, LEAST(12, $1::int / 30 + 1)) k RETURNING id, from_day)
       INSERT INTO reporting.backfill_items (backfill_id, item_key, name, source, stream, window_start, window_end, label, state, runs, records, started_at, finished_at)
       SELECT id, 'w' || i, 'window', 'default', 'payments', from_day + i, from_day + i + 1, 'w' || i, 'done', 1, 10, now() - interval '2 days', now() - interval '1 day'
         FROM b, generate_series(0, 29) i`,
      [days],
    );
    await q('ANALYZE');
  } finally {
    await db.end();
  }
}

/** A day of live ticks' results in the queue (2 streams every 5 minutes), run by a trivial processor. */
async function fillQueue(runtime: Runtime, prefix: string): Promise<Queue> {
  const queue = createQueue(runtime.redis, prefix) as unknown as Queue;
  const now = Date.now();
  const worker = new Worker(
    'sync',
    async (job) => ({
      records: 120,
      incomplete: 0,
      outcome: 'complete',
      checkpoint: new Date(now - 180_000).toISOString(),
      job: job.id,
    }),
    { connection: runtime.redis.duplicate({ maxRetriesPerRequest: null }), prefix, concurrency: 50 },
  );
  const jobs = Array.from({ length: 288 }, (_, i) =>
    (['payments', 'transfers'] as const).map((stream) => ({
      name: 'tick',
      data: { source: 'default', stream },
      opts: { jobId: `t${i}-${stream}` },
    })),
  ).flat();
  await queue.addBulk(jobs);
  while ((await queue.getCompletedCount()) < jobs.length) await new Promise((r) => setTimeout(r, 100));
  await worker.close();
  return queue;
}

function get(url: string): Promise<{ ms: number; bytes: number }> {
  const started = process.hrtime.bigint();
  return new Promise((resolve, reject) => {
    request(url, { agent: false }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => {
        if (res.statusCode !== 200) reject(new Error(`GET ${url}: ${res.statusCode}`));
        else resolve({ ms: Number(process.hrtime.bigint() - started) / 1e6, bytes });
      });
    })
      .on('error', reject)
      .end();
  });
}

interface Variant {
  name: string;
  url: string;
  close(): Promise<void>;
}

async function serve(days: number, server: URL, withExtras: boolean, tag: string) {
  const dbUrl = new URL(server);
  dbUrl.pathname = `/paysync_bench_status_${tag}_${randomBytes(3).toString('hex')}`;
  await migrate(dbUrl.toString());
  say(`filling ${days} days of history (${days * perDay} payments)…`);
  await fill(dbUrl.toString(), days);
  const settings = parseSettings({
    PAYMENTS_BASE_URL: 'http://127.0.0.1:1',
    PAYMENTS_API_KEY: 'bench',
    DATABASE_URL: dbUrl.toString(),
    PAYSYNC_QUEUE_PREFIX: `paysync-bench-status-${randomBytes(4).toString('hex')}`,
  });
  const runtime = await createRuntime(settings, { log: silentLogger, name: 'bench-status' });
  const queue = await fillQueue(runtime, settings.PAYSYNC_QUEUE_PREFIX);
  const status = () =>
    gatherStatus({ pool: runtime.pool, checkpoints: runtime.checkpoints, sources: settings.sources, queue });
  const deps = { pool: runtime.pool, queue, settings, now: () => new Date() };
  const app = dashboardApp({
    queue,
    pool: runtime.pool,
    status,
    ...(withExtras ? { extras: (s: Awaited<ReturnType<typeof status>>) => gatherStatusPage(deps, s) } : {}),
  });
  const http: RunningServer = await listen(app, '127.0.0.1', 0);
  return {
    name: '',
    parts: async () => {
      const t = (f: () => Promise<unknown>) => {
        const s0 = process.hrtime.bigint();
        return f().then(() => Number(process.hrtime.bigint() - s0) / 1e6);
      };
      const st = await status();
      const now = new Date();
      const s = {
        sources: ['default'],
        zone: settings.REPORT_TIMEZONE,
        settleLagMs: settings.SETTLE_LAG,
        horizonMs: settings.SETTLE_HORIZON,
      };
      return {
        status: await t(status),
        calendar: await t(() => gatherCalendar(runtime.pool, s, now)),
        history: await t(() =>
          gatherHistory({ pool: runtime.pool, queue, settleLagMs: settings.SETTLE_LAG }, st.streams, now),
        ),
        backfills: await t(() => gatherBackfills(runtime.pool, now)),
      };
    },
    dbUrl: dbUrl.toString(),
    url: `${http.url}/status`,
    async close() {
      await http.close();
      const keys = await runtime.redis.keys(`${settings.PAYSYNC_QUEUE_PREFIX}*`);
      if (keys.length) await runtime.redis.del(...keys);
      await queue.close();
      await runtime.close();
      await dropBenchDatabase(dbUrl.toString());
    },
  };
}

const server = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/paysync');
const year = await serve(365, server, true, 'year');
const week = await serve(7, server, true, 'week');
const variants: Variant[] = [
  { ...year, name: 'new page, 365 days of history' },
  { ...week, name: 'new page, 7 days of history' },
  { ...year, name: 'old page (tables only), 365 days', url: year.url, close: async () => undefined },
];
// the old page: the same server without the calendar, charts and backfills
const oldApp = await (async () => {
  const runtime = await createRuntime(
    parseSettings({
      PAYMENTS_BASE_URL: 'http://127.0.0.1:1',
      PAYMENTS_API_KEY: 'b',
      DATABASE_URL: year.dbUrl,
    }),
    { log: silentLogger, name: 'bench-status-old' },
  );
  const queue = createQueue(
    runtime.redis,
    `paysync-bench-status-old-${randomBytes(4).toString('hex')}`,
  ) as unknown as Queue;
  const status = () =>
    gatherStatus({
      pool: runtime.pool,
      checkpoints: runtime.checkpoints,
      sources: runtime.settings.sources,
      queue,
    });
  const http = await listen(dashboardApp({ queue, pool: runtime.pool, status }), '127.0.0.1', 0);
  return {
    url: `${http.url}/status`,
    close: async () => {
      await http.close();
      await queue.close();
      await runtime.close();
    },
  };
})();
variants[2]!.url = oldApp.url;
try {
  for (const v of variants) await get(v.url); // warm: connections, plans
  if (process.argv.includes('--parts'))
    for (const [name, v] of [
      ['year', year],
      ['week', week],
    ] as const)
      say(`${name}: parts in ms ${JSON.stringify(await v.parts())}`);
  const ms: number[][] = variants.map(() => []);
  let bytes: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const got = [];
    for (const [i, v] of variants.entries()) {
      const t = await get(v.url);
      ms[i]!.push(t.ms);
      got.push(t.bytes);
    }
    bytes = got;
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const base = median(ms[0]!);
  say('');
  say(`GET /status, median of ${rounds} rounds (nice -n 10, shared 2-core machine):`);
  say('| page | ms | bytes | ratio to the new page with 365 days |');
  say('|---|---|---|---|');
  for (const [i, v] of variants.entries()) {
    const m = median(ms[i]!);
    say(`| ${v.name} | ${m.toFixed(0)} | ${bytes[i]} | ${(m / base).toFixed(2)} |`);
  }
} finally {
  await oldApp.close();
  await year.close();
  await week.close();
}
