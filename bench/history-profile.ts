/**
 * `npm run build && nice node dist/bench/history-profile.js DATABASE_URL [tick|transfers] [--explain]`:
 * where one idle tick's time goes, against a history database of bench/history.ts. Runs the tick four
 * times (the first loads the simulator's days) and reports, for the last: wall time, the worker's CPU
 * (the simulator runs in this process too), and per statement its count and wall time as the worker
 * waited for it. With --explain, every statement (and the statements of trigger functions) also comes
 * back with its plan, timings and buffers (auto_explain, sent to this client as notices).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { parseSettings } from '../src/config/settings.js';
import { silentLogger } from '../src/log.js';
import { createRuntime } from '../src/runtime.js';
import { startSimulator } from '../src/sim/server.js';
import { tickPayments, tickTransfers } from '../src/sync/tick.js';

const [url, what = 'tick'] = process.argv.slice(2).filter((a) => !a.startsWith('--'));
if (!url || !['tick', 'transfers'].includes(what)) {
  process.stderr.write('usage: history-profile.js DATABASE_URL [tick|transfers] [--explain]\n');
  process.exit(2);
}
const explain = process.argv.includes('--explain');

const EXPLAIN_SETTINGS = [
  "LOAD 'auto_explain'",
  'SET auto_explain.log_min_duration = 5',
  'SET auto_explain.log_analyze = on',
  'SET auto_explain.log_buffers = on',
  'SET auto_explain.log_nested_statements = on',
  'SET client_min_messages = log',
].join('; ');

/** Statement text (first 110 characters) → runs and milliseconds, while `recording`. */
const statements = new Map<string, { n: number; ms: number }>();
const plans: string[] = [];
let recording = false;

type Query = (this: pg.Client, ...args: unknown[]) => unknown;
const query = pg.Client.prototype.query as unknown as Query;
(pg.Client.prototype as unknown as { query: Query }).query = function (this: pg.Client, ...args: unknown[]) {
  if (!recording) return query.apply(this, args);
  const self = this as pg.Client & { profiled?: boolean };
  if (explain && !self.profiled) {
    self.profiled = true;
    self.on('notice', (m) => recording && plans.push(m.message ?? ''));
    query.call(this, EXPLAIN_SETTINGS);
  }
  const first = args[0] as string | { text?: string };
  const key = (typeof first === 'string' ? first : (first.text ?? '?')).replace(/\s+/g, ' ').slice(0, 110);
  const started = process.hrtime.bigint();
  const done = () => {
    const s = statements.get(key) ?? { n: 0, ms: 0 };
    s.n += 1;
    s.ms += Number(process.hrtime.bigint() - started) / 1e6;
    statements.set(key, s);
  };
  const last = args.length - 1;
  const callback = args[last];
  if (typeof callback === 'function') {
    // pg.Pool#query passes a callback
    args[last] = (...results: unknown[]) => {
      done();
      return (callback as (...r: unknown[]) => unknown)(...results);
    };
    return query.apply(this, args);
  }
  const result = query.apply(this, args);
  if (result instanceof Promise) return result.finally(done);
  return result;
};

const sim = await startSimulator({ seed: 11, days: 3, perDay: 2_000, clock: 'real' });
const org = sim.organisations[0] as string;
const prefix = `paysync-profile-${randomBytes(3).toString('hex')}`;
const runtime = await createRuntime(
  parseSettings({
    PAYMENTS_BASE_URL: sim.url,
    PAYMENTS_API_KEY: sim.keys.organisation[org] as string,
    DATABASE_URL: url,
    PAYSYNC_QUEUE_PREFIX: prefix,
    UPSTREAM_RPS: '2000',
    PAGE_SIZE: '1000',
  }),
  { log: silentLogger },
);
const say = (line: string) => process.stdout.write(`${line}\n`);
try {
  const deps = runtime.syncContext(runtime.settings.sources[0]!);
  await tickPayments(deps); // loads the simulator's days, as bench/history.ts does first
  await tickTransfers(deps);
  for (let run = 0; run < 4; run++) {
    await runtime.checkpoints.reset('default', 'payments', new Date(Date.now() - 120_000));
    recording = run === 3;
    const cpu = process.cpuUsage();
    const started = process.hrtime.bigint();
    await (what === 'tick' ? tickPayments(deps) : tickTransfers(deps));
    const used = process.cpuUsage(cpu);
    const wall = Number(process.hrtime.bigint() - started) / 1e9;
    say(`run ${run}: ${wall.toFixed(3)} s, worker CPU ${((used.user + used.system) / 1e6).toFixed(3)} s`);
  }
  recording = false;
  const rows = [...statements].sort((a, b) => b[1].ms - a[1].ms);
  say(`statements of the last run: ${rows.reduce((t, [, s]) => t + s.ms, 0).toFixed(0)} ms`);
  for (const [text, s] of rows.slice(0, 20))
    say(`${s.ms.toFixed(1).padStart(8)} ms ${String(s.n).padStart(4)}×  ${text}`);
  for (const plan of plans) say(`----\n${plan}`);
} finally {
  const keys = await runtime.redis.keys(`${prefix}*`);
  if (keys.length) await runtime.redis.del(...keys);
  await runtime.close();
  await sim.stop();
}
