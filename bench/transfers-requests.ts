/**
 * Requests per tick for the transfer list, in each order the service may list it: a list of about
 * 100,000 transfers of which about 1% are unsettled, and about 50 new transfers between two ticks.
 * Each tick's warehouse is checked against the service (every id, every status): the figure counts only
 * ticks that kept the promise. The baseline, measured in the same run, is a full scan of the list (the
 * first tick's): what a tick would cost if it read the whole list every time to stay current.
 * Run: npm run build && node dist/bench/transfers-requests.js [--transfers 100000] [--ticks 3]
 * Needs PostgreSQL and Redis (DATABASE_URL names the server; a throw-away database is made and dropped).
 */
import { randomBytes } from 'node:crypto';
import { parseSettings } from '../src/config/settings.js';
import { silentLogger } from '../src/log.js';
import { createRuntime, type Runtime } from '../src/runtime.js';
import { startSimulator } from '../src/sim/server.js';
import type { RunningSimulator, SimSwitches } from '../src/sim/types.js';
import { tickTransfers } from '../src/sync/tick.js';
import { migrate } from '../src/warehouse/migrate.js';
import { benchDatabaseUrl } from './lib/backfill.js';
import { dropBenchDatabase } from './bench-db.js';
import { wholeArg } from './lib/args.js';

const DAY_MS = 86_400_000;
/** History in days: with the simulator's settling times, about 1% of the list is unsettled at any time. */
const DAYS = 12;

interface Scenario {
  label: string;
  order: SimSwitches['transferOrder'];
  shape: SimSwitches['shape'];
}

const SCENARIOS: Scenario[] = [
  { label: 'newest-first', order: 'desc', shape: 'wrapper' },
  { label: 'oldest-first', order: 'asc', shape: 'wrapper' },
  { label: 'oldest-first, bare arrays', order: 'asc', shape: 'array' },
  { label: 'unknown order', order: 'unordered', shape: 'wrapper' },
];

interface Figures {
  label: string;
  listed: number;
  unsettled: number;
  fullScan: number;
  ticks: Array<{ requests: number; newTransfers: number; mode: string; current: boolean }>;
}

function transferRequests(sim: RunningSimulator, since: number): number {
  return sim
    .requestLog()
    .slice(since)
    .filter((r) => r.path.startsWith('/api/transferts')).length;
}

/** Whether the warehouse holds every transfer the service lists, with its status, and nothing else. */
async function isCurrent(runtime: Runtime, sim: RunningSimulator, org: string): Promise<boolean> {
  const { rows } = await runtime.pool.query<{ id: string; status: string }>(
    'SELECT id, status FROM reporting.transfers',
  );
  const held = new Map(rows.map((r) => [r.id, r.status]));
  const truth = sim.transfers(org);
  return truth.length === held.size && truth.every((t) => held.get(t.id) === t.status);
}

async function measure(s: Scenario, transfers: number, ticks: number): Promise<Figures> {
  const perDay = Math.round(transfers / DAYS);
  const sim = await startSimulator({
    seed: 11,
    days: DAYS,
    perDay: 10,
    transfersPerDay: perDay,
    organisations: 1,
    switches: { transferOrder: s.order, shape: s.shape },
  });
  const org = sim.organisations[0] as string;
  const databaseUrl = benchDatabaseUrl();
  const prefix = `paysync-bench-transfers-${randomBytes(3).toString('hex')}`;
  await migrate(databaseUrl);
  const settings = parseSettings({
    PAYMENTS_BASE_URL: sim.url,
    PAYMENTS_API_KEY: sim.keys.organisation[org] as string,
    DATABASE_URL: databaseUrl,
    PAYSYNC_QUEUE_PREFIX: prefix,
    UPSTREAM_RPS: '10000',
    PAGE_SIZE: '100',
    // the periodic verification scan is measured apart (the first tick's full scan): keep it out of the ticks
    TRANSFERS_FULL_SCAN_EVERY: '1d',
  });
  const runtime = await createRuntime(settings, {
    log: silentLogger,
    name: 'bench-transfers',
    now: () => sim.now(),
  });
  try {
    const deps = runtime.syncContext(settings.sources[0]!);
    let since = sim.requestLog().length;
    await tickTransfers(deps);
    const fullScan = transferRequests(sim, since);
    const { rows } = await runtime.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM reporting.transfers WHERE status NOT IN ('COMPLETE', 'FAILED')`,
    );
    const figures: Figures = {
      label: s.label,
      listed: sim.transfers(org).length,
      unsettled: rows[0]?.n ?? 0,
      fullScan,
      ticks: [],
    };
    for (let i = 0; i < ticks; i++) {
      const before = sim.transfers(org).length;
      sim.advance(Math.round((50 / perDay) * DAY_MS)); // about 50 new transfers
      since = sim.requestLog().length;
      const result = await tickTransfers(deps);
      figures.ticks.push({
        requests: transferRequests(sim, since),
        newTransfers: sim.transfers(org).length - before,
        mode: result?.mode ?? 'skipped',
        current: await isCurrent(runtime, sim, org),
      });
    }
    return figures;
  } finally {
    const keys = await runtime.redis.keys(`${prefix}*`);
    if (keys.length) await runtime.redis.del(...keys);
    await runtime.close();
    await sim.stop();
    await dropBenchDatabase(databaseUrl).catch(() => undefined);
  }
}

function render(all: Figures[]): string {
  const lines = [
    '| order | listed | unsettled | new per tick | requests per tick | read | current after every tick | full scan (baseline) | ratio |',
    '|---|---|---|---|---|---|---|---|---|',
  ];
  for (const f of all) {
    const now = f.ticks.map((t) => t.requests).join(', ');
    const fresh = f.ticks.map((t) => t.newTransfers).join(', ');
    const modes = [...new Set(f.ticks.map((t) => t.mode))].join(', ');
    const current = f.ticks.every((t) => t.current) ? 'yes' : 'NO';
    const worst = Math.max(...f.ticks.map((t) => t.requests));
    const ratio = `${(worst / f.fullScan).toFixed(2)}x`;
    const unsettled = `${f.unsettled} (${((100 * f.unsettled) / f.listed).toFixed(1)}%)`;
    lines.push(
      `| ${f.label} | ${f.listed} | ${unsettled} | ${fresh} | ${now} | ${modes} | ${current} | ${f.fullScan} | ${ratio} |`,
    );
  }
  return lines.join('\n');
}

async function main(): Promise<void> {
  const transfers = wholeArg('--transfers', 100_000, 1000);
  const ticks = wholeArg('--ticks', 3, 1);
  const all: Figures[] = [];
  for (const s of SCENARIOS) {
    process.stdout.write(`${s.label}: full scan, then ${ticks} ticks…\n`);
    all.push(await measure(s, transfers, ticks));
  }
  process.stdout.write(`\n${render(all)}\n`);
  process.stdout.write(
    `\nfull scan of the list (the first tick, and the verification scan every TRANSFERS_FULL_SCAN_EVERY): ` +
      `${all.map((f) => `${f.label} ${f.fullScan}`).join(', ')} requests\n`,
  );
}

await main();
