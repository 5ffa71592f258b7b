/**
 * `paysync probe` measures what the service really does at each open point of the interface, with a
 * handful of requests, says "unknown" on thin evidence, stores what it found and flags what changed.
 * Every case runs the probe over real HTTP against the simulator in one switch setting.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { Secret } from '../../src/config/secret.js';
import { UpstreamAuthError } from '../../src/errors.js';
import { probeAndRecord, renderReport, run } from '../../src/cli/commands/probe.js';
import { compareFindings, probeKey } from '../../src/probe/findings-store.js';
import type { Findings } from '../../src/probe/findings.js';
import { cheaperSyncHints } from '../../src/probe/hints.js';
import { createProbeClient } from '../../src/probe/probe-client.js';
import { probeSource, type ProbeOptions } from '../../src/probe/probe.js';
import { startSimulator } from '../../src/sim/server.js';
import { DEFAULT_SWITCHES } from '../../src/sim/switches.js';
import type { RunningSimulator, SimOptions, SimSwitches } from '../../src/sim/types.js';
import { startHarness, type Harness } from '../helpers/sync-harness.js';

const REQUEST_BUDGET = 25;

function probeClientFor(sim: RunningSimulator, key?: string) {
  const org = sim.organisations[0] as string;
  return createProbeClient({
    source: {
      name: 'probe-test',
      baseUrl: sim.url,
      apiKey: new Secret(key ?? (sim.keys.organisation[org] as string)),
      scope: 'organisation',
    },
    timeoutMs: 5_000,
    retries: 2,
    backoff: { baseMs: 5, maxMs: 20 },
  });
}

/** Probes the simulator in one switch setting; checks the request count against the service's own log. */
async function probeWith(sim: RunningSimulator, switches: Partial<SimSwitches>, opts: ProbeOptions = {}) {
  sim.setSwitches({ ...DEFAULT_SWITCHES, ...switches });
  sim.clearRequestLog();
  const findings = await probeSource(probeClientFor(sim), { now: () => sim.now(), ...opts });
  expect(findings.requests).toBe(sim.requestLog().length);
  expect(findings.requests).toBeLessThanOrEqual(REQUEST_BUDGET);
  return findings;
}

describe('probe against the simulator', () => {
  let sim: RunningSimulator;
  beforeAll(async () => {
    sim = await startSimulator({ seed: 11, days: 3, perDay: 40 });
  });
  afterAll(async () => sim.stop());

  it('reads the plain service: wrapper, default 10, no cap, inclusive bounds, oldest first', async () => {
    const f = await probeWith(sim, {}, { sizes: [20, 40] });
    expect(f).toMatchObject({
      paymentsHonourStatus: true,
      listShape: 'wrapper',
      defaultPageSize: 10,
      maxPageSize: null,
      pageSizeServed: 40,
      dateFromInclusive: true,
      dateToInclusive: true,
      paymentsHonourDates: true,
      paymentOrder: 'asc',
      transferOrder: 'asc',
      // the interface documents no filter on transfers, and the simulator applies none
      transfersHonourDates: false,
      honoursPage: true,
    });
    expect(f.probedAt).toBe(sim.now().toISOString());
  });

  it.each([
    ['array', 'array'],
    ['wrapper', 'wrapper'],
    ['alternate', 'mixed'],
  ] as const)('names the list shape %s as %s', async (shape, expected) => {
    expect((await probeWith(sim, { shape })).listShape).toBe(expected);
  });

  it('finds a cap of 50 and a default page of 10 with the default sizes', async () => {
    const f = await probeWith(sim, { pageCap: 50, defaultPageSize: 10 });
    expect(f).toMatchObject({ maxPageSize: 50, defaultPageSize: 10, pageSizeServed: null });
  });

  it('finds a cap between the sizes asked, on bare arrays too', async () => {
    const f = await probeWith(sim, { shape: 'array', pageCap: 30 }, { sizes: [20, 40] });
    expect(f).toMatchObject({ maxPageSize: 30, pageSizeServed: 20 });
  });

  it('leaves the cap unknown when every record fits on one page', async () => {
    const f = await probeWith(sim, {});
    expect(f).toMatchObject({ maxPageSize: null, pageSizeServed: null });
  });

  it.each([
    [true, true],
    [false, false],
    [true, false],
    [false, true],
  ])('tells dateFrom inclusive=%s from dateTo inclusive=%s', async (from, to) => {
    const f = await probeWith(sim, { dateFromInclusive: from, dateToInclusive: to });
    expect(f).toMatchObject({ dateFromInclusive: from, dateToInclusive: to, paymentsHonourDates: true });
  });

  it('says nothing about the bounds when the service ignores dates', async () => {
    const f = await probeWith(sim, { ignoreDateFilter: true });
    expect(f).toMatchObject({ paymentsHonourDates: false, dateFromInclusive: null, dateToInclusive: null });
  });

  it.each([
    ['asc', 'desc'],
    ['desc', 'unordered'],
    ['unordered', 'asc'],
  ] as const)('reads payments %s and transfers %s', async (paymentOrder, transferOrder) => {
    const f = await probeWith(sim, { paymentOrder, transferOrder, shape: 'array' });
    expect(f).toMatchObject({ paymentOrder, transferOrder });
  });

  it('sees a service that ignores `page`', async () => {
    expect((await probeWith(sim, { ignorePage: true })).honoursPage).toBe(false);
  });

  it('stops with the auth error when the key is rejected', async () => {
    sim.setSwitches(DEFAULT_SWITCHES);
    await expect(probeSource(probeClientFor(sim, 'not-a-key'))).rejects.toBeInstanceOf(UpstreamAuthError);
  });
});

describe('probe on thin evidence', () => {
  it('says unknown instead of guessing when the lists are nearly empty', async () => {
    const sim = await startSimulator({ seed: 3, days: 1, perDay: 2, transfersPerDay: 1 });
    try {
      sim.setSwitches({ pageCap: 1 });
      const f = await probeSource(probeClientFor(sim));
      expect(f).toMatchObject({
        defaultPageSize: null,
        paymentOrder: 'unknown',
        transferOrder: 'unknown',
        honoursPage: null,
      });
      expect(f.requests).toBeLessThanOrEqual(REQUEST_BUDGET);
    } finally {
      await sim.stop();
    }
  });
});

const base: Findings = {
  listShape: 'wrapper',
  defaultPageSize: 10,
  maxPageSize: null,
  pageSizeServed: 5000,
  dateFromInclusive: true,
  dateToInclusive: true,
  paymentsHonourDates: true,
  paymentsHonourStatus: true,
  paymentOrder: 'asc',
  transferOrder: 'desc',
  transfersHonourDates: false,
  honoursPage: true,
  probedAt: '2026-01-01T00:00:00.000Z',
  requests: 9,
};

describe('comparing probes and hints (pure)', () => {
  it('flags changed findings but not a finding that became unknown', () => {
    const next: Findings = { ...base, maxPageSize: 50, dateToInclusive: false, paymentOrder: 'unknown' };
    expect(compareFindings(base, next).map((c) => [c.finding, c.before, c.after])).toEqual([
      ['maxPageSize', 'none', '50'],
      ['dateToInclusive', 'inclusive', 'exclusive'],
    ]);
    expect(compareFindings(null, next)).toEqual([]);
    expect(compareFindings(base, { ...base, requests: 12, probedAt: 'later' })).toEqual([]);
  });

  it('hints only what cannot lose a record', () => {
    expect(cheaperSyncHints(null)).toEqual({ transfersNewestFirst: false });
    expect(cheaperSyncHints(base)).toEqual({
      transfersNewestFirst: true,
      pageSize: 1000,
      statusFilter: true,
    });
    expect(cheaperSyncHints({ ...base, maxPageSize: 50, pageSizeServed: null })).toEqual({
      transfersNewestFirst: true,
      pageSize: 50,
      statusFilter: true,
    });
    const unknown = {
      ...base,
      transferOrder: 'unordered',
      maxPageSize: null,
      pageSizeServed: null,
      paymentsHonourStatus: null,
    } as const;
    expect(cheaperSyncHints(unknown)).toEqual({ transfersNewestFirst: false });
  });
});

describe('probe stores its findings and flags changes', () => {
  let h: Harness;
  const simOptions: SimOptions = { switches: { pageCap: 80, transferOrder: 'asc' } };
  beforeEach(async () => {
    h = await startHarness({ name: 'probe', sim: simOptions });
  });
  afterEach(async () => h.close());

  async function storedRows() {
    const { rows } = await h.runtime.pool.query(
      'SELECT probed_at, findings, changes FROM reporting.probe_findings WHERE source = $1 ORDER BY probed_at',
      ['default'],
    );
    return rows as Array<{ findings: Findings; changes: Array<{ finding: string }> }>;
  }

  it('keeps the latest in Redis, the history in the warehouse, and names what changed', async () => {
    const source = h.settings.sources[0]!;
    const first = await probeAndRecord(h.runtime, source);
    expect(first).toMatchObject({ previousProbedAt: null, changes: [] });
    expect(renderReport(first)).toContain('first probe of this source');
    const redisCopy = JSON.parse((await h.runtime.redis.get(probeKey(h.prefix, 'default'))) ?? 'null');
    expect(redisCopy).toEqual(first.findings);

    h.sim.setSwitches({ pageCap: 50, transferOrder: 'desc' });
    const second = await probeAndRecord(h.runtime, source);
    expect(second.changes.map((c) => c.finding).sort()).toEqual(['maxPageSize', 'transferOrder']);
    expect(renderReport(second)).toMatch(/changed since last probe .*: max page size: 80 -> 50/);
    expect(cheaperSyncHints(second.findings)).toEqual({
      transfersNewestFirst: true,
      pageSize: 50,
      statusFilter: true,
    });

    const rows = await storedRows();
    expect(rows).toHaveLength(2);
    expect(rows[1]?.changes.map((c) => c.finding).sort()).toEqual(['maxPageSize', 'transferOrder']);
  });

  it('finds the previous probe in the warehouse when Redis lost it', async () => {
    const source = h.settings.sources[0]!;
    await probeAndRecord(h.runtime, source);
    await h.runtime.redis.del(probeKey(h.prefix, 'default'));
    h.sim.setSwitches({ dateFromInclusive: false });
    const second = await probeAndRecord(h.runtime, source);
    expect(second.changes.map((c) => c.finding)).toEqual(['dateFromInclusive']);
  });

  /** Runs the command with the harness's settings in the environment; returns the exit code and output. */
  async function runCommand(argv: string[], key: string) {
    const env = {
      PAYMENTS_BASE_URL: h.sim.url,
      PAYMENTS_API_KEY: key,
      DATABASE_URL: h.databaseUrl,
      PAYSYNC_QUEUE_PREFIX: h.prefix,
      LOG_LEVEL: 'silent',
    };
    const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
    Object.assign(process.env, env);
    let out = '';
    const write = (chunk: unknown) => ((out += String(chunk)), true);
    const stdout = jest.spyOn(process.stdout, 'write').mockImplementation(write);
    const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(write);
    try {
      return { code: await run(argv), out };
    } finally {
      stdout.mockRestore();
      stderr.mockRestore();
      for (const [k, v] of Object.entries(saved)) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
    }
  }

  it('paysync probe prints the table (exit 0) and a clear line when the key is refused (exit 1)', async () => {
    const ok = await runCommand([], h.key);
    expect(ok.code).toBe(0);
    expect(ok.out).toMatch(/default: probed at .* with \d+ requests/);
    expect(ok.out).toMatch(/max page size\s+80/);
    const json = await runCommand(['--json', '--source', 'default'], h.key);
    expect(JSON.parse(json.out)[0].findings.maxPageSize).toBe(80);
    const refused = await runCommand([], 'not-a-key');
    expect(refused.code).toBe(1);
    expect(refused.out).toMatch(
      /default could not be probed \[UPSTREAM_UNAUTHORIZED\]: the service refused the API key/,
    );
    await expect(runCommand(['--source', 'nope'], h.key)).rejects.toThrow(/--source nope is not configured/);
  });
});
