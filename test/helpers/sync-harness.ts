/**
 * A whole paysync stack for one test file: a simulator on a free loopback port, a fresh migrated database,
 * its own Redis key prefix, and the runtime wired to them with the simulator's clock. `close()` removes
 * everything it made (the database is kept when KEEP_TEST_DB is set, for inspection).
 */
import { afterAll, beforeAll } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { parseSettings, type Settings } from '../../src/config/settings.js';
import { silentLogger } from '../../src/log.js';
import { createRuntime, type Runtime } from '../../src/runtime.js';
import { startSimulator } from '../../src/sim/server.js';
import type { RunningSimulator, SimOptions } from '../../src/sim/types.js';
import { DateTime } from 'luxon';
import { tickPayments, tickTransfers } from '../../src/sync/tick.js';
import { localDayOf } from '../../src/sync/windows.js';
import { createTestDatabase } from './db.js';

export interface Harness {
  sim: RunningSimulator;
  org: string;
  key: string;
  prefix: string;
  settings: Settings;
  runtime: Runtime;
  databaseUrl: string;
  close(): Promise<void>;
}

export interface HarnessOptions {
  name: string;
  sim?: SimOptions;
  env?: Record<string, string>;
  /** Use this key instead of the first organisation's. */
  key?: (sim: RunningSimulator) => string;
}

/**
 * A harness started before the enclosing describe block's tests and closed after them; call the returned
 * function inside a test to get it.
 */
export function harnessFor(options: HarnessOptions): () => Harness {
  let started: Harness | undefined;
  beforeAll(async () => {
    started = await startHarness(options);
  });
  afterAll(async () => {
    await started?.close();
  });
  return () => {
    if (!started) throw new Error(`harness ${options.name} is not started (use it inside a test)`);
    return started;
  };
}

/**
 * The latest instant at or before `at` whose wall clock in `zone` reads 12:00: a simulator started there
 * has yesterday over by twelve hours and settled, whatever the hour the test runs at. Tests about
 * yesterday's pack start their simulator here (near local midnight, yesterday would still be syncing
 * and its records still moving, and the test would depend on when it runs).
 */
export function middayBefore(zone: string, at: Date = new Date()): Date {
  const local = DateTime.fromJSDate(at, { zone });
  const noon = local.set({ hour: 12, minute: 0, second: 0, millisecond: 0 });
  return (noon <= local ? noon : noon.minus({ days: 1 })).toJSDate();
}

export async function startHarness(options: HarnessOptions): Promise<Harness> {
  const sim = await startSimulator({ seed: 7, days: 3, perDay: 40, ...options.sim });
  const db = await createTestDatabase(options.name);
  const org = sim.organisations[0] as string;
  const key = options.key ? options.key(sim) : (sim.keys.organisation[org] as string);
  const prefix = `paysync-test-${options.name}-${randomBytes(4).toString('hex')}`;
  const days = options.sim?.days ?? 3;
  const settings = parseSettings({
    PAYMENTS_BASE_URL: sim.url,
    PAYMENTS_API_KEY: key,
    DATABASE_URL: db.url,
    PAYSYNC_QUEUE_PREFIX: prefix,
    UPSTREAM_RPS: '2000',
    UPSTREAM_RETRIES: '6',
    SYNC_START: localDayOf(new Date(sim.now().getTime() - (days + 1) * 86_400_000), 'UTC'),
    PAGE_SIZE: '25',
    ...options.env,
  });
  const runtime = await createRuntime(settings, {
    log: silentLogger,
    name: `test-${options.name}`,
    backoff: { baseMs: 5, maxMs: 50, maxRetryAfterMs: 2_000 },
    now: () => sim.now(),
  });
  return {
    sim,
    org,
    key,
    prefix,
    settings,
    runtime,
    databaseUrl: db.url,
    async close() {
      const keys = await runtime.redis.keys(`${prefix}*`);
      if (keys.length) await runtime.redis.del(...keys);
      await runtime.close();
      await sim.stop();
      await db.drop();
    },
  };
}

/** One payments tick, then one transfers tick, of the harness's first source: their results. */
export async function syncAll(h: Harness) {
  const deps = h.runtime.syncContext(h.settings.sources[0]!);
  const payments = await tickPayments(deps);
  const transfers = await tickTransfers(deps);
  return { payments, transfers };
}

/**
 * Differences between the warehouse's payments of a source and the simulator's truth (empty: equal);
 * `createdBefore`: only the service's payments created before then are expected.
 */
export async function paymentDifferences(
  h: Harness,
  source = 'default',
  createdBefore?: Date,
): Promise<string[]> {
  const truth = h.sim
    .payments(h.org)
    .filter((p) => createdBefore === undefined || Date.parse(p.createdAt) < createdBefore.getTime());
  const { rows } = await h.runtime.pool.query(
    `SELECT id, reference, amount::text AS amount, description, status, transaction_type, phone, service_mobile_code,
            extra_data, created_at, updated_at, organization_id, api_key_id
       FROM reporting.payments WHERE source = $1`,
    [source],
  );
  const stored = new Map(rows.map((r) => [r.id as string, r]));
  const diffs: string[] = [];
  for (const p of truth) {
    const r = stored.get(p.id);
    if (!r) {
      diffs.push(`missing ${p.id} (${p.createdAt})`);
      continue;
    }
    stored.delete(p.id);
    const expected = [
      p.reference,
      String(p.amount),
      p.description,
      p.status,
      p.transaction_type,
      p.phone,
      p.service_mobile_code,
      Date.parse(p.createdAt),
      Date.parse(p.updatedAt),
      p.organization_id,
      p.api_key_id,
      canonical(p.extra_data),
    ];
    const actual = [
      r.reference,
      r.amount,
      r.description,
      r.status,
      r.transaction_type,
      r.phone,
      r.service_mobile_code,
      new Date(r.created_at).getTime(),
      new Date(r.updated_at).getTime(),
      r.organization_id,
      r.api_key_id,
      canonical(r.extra_data),
    ];
    expected.forEach((v, i) => {
      if (v !== actual[i]) diffs.push(`${p.id} field ${i}: expected ${String(v)} got ${String(actual[i])}`);
    });
  }
  for (const id of stored.keys()) diffs.push(`extra ${id} not in the service`);
  return diffs;
}

export async function transferDifferences(h: Harness, source = 'default'): Promise<string[]> {
  const truth = h.sim.transfers(h.org);
  const { rows } = await h.runtime.pool.query(
    `SELECT id, amount::text AS amount, status, updated_at FROM reporting.transfers WHERE source = $1`,
    [source],
  );
  const stored = new Map(rows.map((r) => [r.id as string, r]));
  const diffs: string[] = [];
  for (const t of truth) {
    const r = stored.get(t.id);
    if (!r) diffs.push(`missing transfer ${t.id}`);
    else if (
      r.amount !== String(t.amount) ||
      r.status !== t.status ||
      new Date(r.updated_at).getTime() !== Date.parse(t.updatedAt)
    ) {
      diffs.push(
        `transfer ${t.id}: expected ${t.amount}/${t.status}/${t.updatedAt} got ${r.amount}/${r.status}/${new Date(r.updated_at).toISOString()}`,
      );
    }
    stored.delete(t.id);
  }
  for (const id of stored.keys()) diffs.push(`extra transfer ${id}`);
  return diffs;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}
