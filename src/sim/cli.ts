/**
 * `paysync sim`: runs the simulator in the foreground until SIGINT/SIGTERM. Prints one start-up line
 * with the address and the keys (simulator test keys, not secrets of any real service).
 */
import { parseArgs } from 'node:util';
import { UsageError } from '../errors.js';
import { startSimulator } from './server.js';
import { DEFAULT_EXTRA_FIELDS } from './switches.js';
import type { ListShape, Ordering, Outage, SimOptions, SimSwitches } from './types.js';

const FLAGS = {
  port: { type: 'string' },
  host: { type: 'string' },
  seed: { type: 'string' },
  days: { type: 'string' },
  'per-day': { type: 'string' },
  orgs: { type: 'string' },
  malformed: { type: 'string' },
  'api-key': { type: 'string', multiple: true },
  shape: { type: 'string' },
  'page-cap': { type: 'string' },
  order: { type: 'string' },
  bounds: { type: 'string' },
  clock: { type: 'string' },
  'rate-limit': { type: 'string' },
  'server-errors': { type: 'string' },
  latency: { type: 'string' },
  'rate-limit-rps': { type: 'string' },
  outage: { type: 'string' },
  duplicates: { type: 'string' },
  'extra-fields': { type: 'boolean' },
  'echo-key': { type: 'boolean' },
} as const;

function number(flag: string, text: string | undefined, check: (n: number) => boolean): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (text.trim() === '' || !Number.isFinite(n) || !check(n))
    throw new UsageError(`--${flag}: invalid value "${text}"`);
  return n;
}

function oneOf<T extends string>(
  flag: string,
  text: string | undefined,
  allowed: readonly T[],
): T | undefined {
  if (text === undefined) return undefined;
  if (!(allowed as readonly string[]).includes(text)) {
    throw new UsageError(`--${flag}: expected one of ${allowed.join(', ')}, got "${text}"`);
  }
  return text as T;
}

const whole = (n: number) => Number.isInteger(n) && n >= 0;
const positive = (n: number) => Number.isInteger(n) && n >= 1;
const rate = (n: number) => n >= 0 && n <= 1;

function switchesFrom(v: Record<string, string | undefined>): Partial<SimSwitches> {
  const s: Partial<SimSwitches> = {};
  const shape = oneOf<ListShape>('shape', v.shape, ['array', 'wrapper', 'alternate']);
  if (shape) s.shape = shape;
  const cap = number('page-cap', v['page-cap'], positive);
  if (cap !== undefined) s.pageCap = cap;
  const order = oneOf<Ordering>('order', v.order, ['asc', 'desc', 'unordered']);
  if (order) s.paymentOrder = s.transferOrder = order;
  const bounds = oneOf('bounds', v.bounds, ['inclusive', 'exclusive']);
  if (bounds) s.dateFromInclusive = s.dateToInclusive = bounds === 'inclusive';
  const limit = number('rate-limit', v['rate-limit'], rate);
  if (limit !== undefined) s.rateLimitRate = limit;
  const errors = number('server-errors', v['server-errors'], rate);
  if (errors !== undefined) s.serverErrorRate = errors;
  return s;
}

/** The flags for service anomalies, throughput, schema drift and hostile input (see types.ts). */
function anomalySwitches(v: Record<string, string | boolean | undefined>): Partial<SimSwitches> {
  const text = v as Record<string, string | undefined>;
  const s: Partial<SimSwitches> = {};
  const latency = number('latency', text.latency, whole);
  if (latency !== undefined) s.latencyMs = latency;
  const rps = number('rate-limit-rps', text['rate-limit-rps'], (n) => n > 0);
  if (rps !== undefined) s.rateLimitRps = rps;
  // `refused` closes the port the control routes need to end it: in-process only.
  const outage = oneOf<Outage>('outage', text.outage, ['none', 'unavailable', 'reset']);
  if (outage) s.outage = outage;
  const duplicates = number('duplicates', text.duplicates, rate);
  if (duplicates !== undefined) s.duplicateRate = duplicates;
  if (v['extra-fields'] === true) s.paymentExtraFields = s.transferExtraFields = { ...DEFAULT_EXTRA_FIELDS };
  if (v['echo-key'] === true) s.echoKey = ['api_key_id'];
  return s;
}

export function parseSimArgs(argv: string[]): SimOptions {
  let values: Record<string, string | string[] | boolean | undefined>;
  try {
    values = parseArgs({ args: argv, options: FLAGS, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const v = values as Record<string, string | undefined>;
  const switches = { ...switchesFrom(v), ...anomalySwitches(values as Record<string, string | boolean>) };
  const options: SimOptions = {
    port: number('port', v.port, (n) => whole(n) && n < 65536) ?? 0,
    host: v.host ?? '127.0.0.1',
    seed: number('seed', v.seed, Number.isInteger),
    days: number('days', v.days, (n) => n > 0),
    perDay: number('per-day', v['per-day'], whole),
    organisations: number('orgs', v.orgs, positive),
    malformed: number('malformed', v.malformed, whole),
    apiKeys: (values['api-key'] as string[] | undefined) ?? [],
    clock: oneOf('clock', v.clock, ['real', 'manual']) ?? 'real',
    switches,
  };
  return Object.fromEntries(Object.entries(options).filter(([, x]) => x !== undefined)) as SimOptions;
}

export async function runSimCommand(argv: string[]): Promise<number> {
  const options = parseSimArgs(argv);
  const started = Date.now();
  const sim = await startSimulator(options);
  const keys = Object.entries(sim.keys.organisation).map(([org, key]) => `${org}=${key}`);
  process.stdout.write(
    `paysync sim: listening on ${sim.url} (payment url ${sim.paymentUrl}, ready in ${Date.now() - started} ms); ` +
      `organisation keys ${keys.join(' ')}; by-key-only key ${sim.keys.byKeyOnly}; no-rights key ${sim.keys.forbidden}; ` +
      `control routes under ${sim.url}/__sim/\n`,
  );
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await sim.stop();
  process.stdout.write('paysync sim: stopped\n');
  return 0;
}
