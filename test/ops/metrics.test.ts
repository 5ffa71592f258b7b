/**
 * The worker's metrics and health endpoints, against a real sync: after ticks run by a real BullMQ
 * worker, /metrics shows records, requests by endpoint and status, retries, windows, lag, queue depth and
 * the last successful tick; /readyz (and /healthz) answer for Redis, PostgreSQL, the migrations and
 * draining, /livez for the process alone.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import type { Queue } from 'bullmq';
import { checkHealth } from '../../src/ops/health.js';
import { PaysyncMetrics, RESULT_DAYS } from '../../src/ops/metrics.js';
import { startHarness, type Harness } from '../helpers/sync-harness.js';
import {
  httpGet,
  insertReconcileRun,
  sample,
  settled,
  startOpsStack,
  type OpsStack,
} from '../helpers/ops.js';

let h: Harness | null = null;
let stack: OpsStack | null = null;
afterEach(async () => {
  await stack?.close();
  await h?.close();
  stack = null;
  h = null;
});

const get = (url: string) => httpGet(url);

describe('paysync worker metrics', () => {
  it('exposes what a sync did and where it stands, in Prometheus format', async () => {
    h = await startHarness({ name: 'opsmetrics', env: { METRICS_PORT: '0' } });
    stack = await startOpsStack(h);
    h.sim.setSwitches({ serverErrorRate: 0.2 });
    const queue = stack.running.queue as unknown as Queue;
    for (const stream of ['payments', 'transfers']) {
      const job = await queue.add('tick', { source: 'default', stream }, { jobId: `t-${stream}` });
      expect(await settled(queue, job.id as string)).toBe('completed');
    }
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    await insertReconcileRun(stack.runtime.pool, yesterday, 1);
    const { status, text } = await get(`${stack.ops.metricsUrl}/metrics`);
    expect(status).toBe(200);
    const pay = { source: 'default', stream: 'payments' };
    expect(sample(text, 'paysync_records_synced_total', pay)).toBeGreaterThan(0);
    expect(sample(text, 'paysync_records_synced_total', { ...pay, stream: 'transfers' })).toBeGreaterThan(0);
    expect(
      sample(text, 'paysync_upstream_requests_total', { source: 'default', status: '200' }),
    ).toBeGreaterThan(0);
    expect(
      sample(text, 'paysync_upstream_requests_total', { source: 'default', status: '500' }),
    ).toBeGreaterThan(0);
    expect(sample(text, 'paysync_upstream_retries_total', { source: 'default' })).toBeGreaterThan(0);
    expect(sample(text, 'paysync_window_duration_seconds_count', pay)).toBeGreaterThan(0);
    expect(sample(text, 'paysync_sync_lag_seconds', pay)).not.toBeNull();
    expect(sample(text, 'paysync_incomplete_windows', pay)).toBe(0);
    expect(sample(text, 'paysync_queue_jobs', { state: 'completed' })).toBe(2);
    expect(sample(text, 'paysync_last_successful_tick_timestamp_seconds', pay)).toBeGreaterThan(
      Date.now() / 1000 - 120,
    );
    expect(sample(text, 'paysync_jobs_total', { name: 'tick', outcome: 'completed' })).toBe(2);
    expect(sample(text, 'paysync_status_scrape_error')).toBe(0);
    expect(sample(text, 'paysync_upstream_circuit_open', { source: 'default' })).toBe(0); // 20% 5xx: up
    expect(sample(text, 'paysync_reconcile_mismatches', { day: yesterday })).toBe(1);
  });

  it('answers /livez, /readyz and /healthz (its older name), and turns unready while draining', async () => {
    h = await startHarness({ name: 'opshealth', env: { METRICS_PORT: '0' } });
    stack = await startOpsStack(h);
    const ready = {
      status: 'ok',
      process: 'ok',
      redis: 'ok',
      postgres: 'ok',
      migrations: 'ok',
      worker: 'ok',
    };
    for (const path of ['/readyz', '/healthz']) {
      const r = await get(`${stack.ops.metricsUrl}${path}`);
      expect({ path, status: r.status, body: JSON.parse(r.text) }).toEqual({
        path,
        status: 200,
        body: ready,
      });
    }
    stack.ops.draining();
    for (const path of ['/readyz', '/healthz']) {
      const r = await get(`${stack.ops.metricsUrl}${path}`);
      expect({ path, status: r.status }).toEqual({ path, status: 503 });
      expect(JSON.parse(r.text).worker).toMatch(/^draining/);
    }
    const live = await get(`${stack.ops.metricsUrl}/livez`);
    expect({ status: live.status, body: JSON.parse(live.text) }).toEqual({
      status: 200,
      body: { status: 'ok', process: 'ok', worker: 'draining' },
    });
  });
});

describe('health checks', () => {
  it('report an unreachable or hanging dependency instead of hanging', async () => {
    const report = await checkHealth({
      redis: { ping: () => new Promise<'PONG'>(() => undefined) },
      pool: { query: (() => Promise.reject(new Error('connect ECONNREFUSED'))) as never },
      timeoutMs: 100,
    });
    expect(report.ok).toBe(false);
    expect(report.checks.redis).toMatch(/no answer within 100 ms/);
    expect(report.checks.postgres).toMatch(/ECONNREFUSED/);
  });

  it('name the migrations a database lacks, and what to run', async () => {
    const report = await checkHealth({
      redis: { ping: async () => 'PONG' as const },
      pool: { query: (async () => ({ rows: [] })) as never },
      pendingMigrations: async () => ['019_backfill_trace.sql', '021_a.sql', '022_b.sql', '023_c.sql'],
    });
    expect(report).toEqual({
      ok: false,
      checks: {
        process: 'ok',
        redis: 'ok',
        postgres: 'ok',
        migrations:
          '4 migration(s) not applied (019_backfill_trace.sql, 021_a.sql, 022_b.sql, …): run `paysync migrate`',
      },
    });
  });
});

describe('the upstream circuit', () => {
  it('is 1 per source while its service is down (circuit open), else 0', async () => {
    const m = new PaysyncMetrics();
    const circuit = (source: string, open: boolean) => ({
      source,
      open,
      failures: open ? 12 : 0,
      since: open ? new Date('2026-10-01T10:00:00Z') : null,
      lastError: open ? 'the service answered 503 (source a, /api/transferts)' : null,
      lastCode: open ? ('SERVICE_UNAVAILABLE' as const) : null,
      lastAt: null,
      nextProbe: null,
      probes: 0,
    });
    const text = await m.render(async () => ({
      queue: {},
      streams: [],
      circuits: [circuit('a', true), circuit('b', false)],
    }));
    expect(sample(text, 'paysync_upstream_circuit_open', { source: 'a' })).toBe(1);
    expect(sample(text, 'paysync_upstream_circuit_open', { source: 'b' })).toBe(0);
  });
});

describe('reconcile and export results', () => {
  it('are gauges per day, keeping only the last days', async () => {
    const m = new PaysyncMetrics();
    for (let d = 1; d <= RESULT_DAYS + 2; d++) {
      const day = `2026-10-${String(d).padStart(2, '0')}`;
      m.recordReconcileResult(day, d === 16 ? 3 : 0);
      m.recordExportResult(day, 1);
    }
    const text = await m.render();
    expect(sample(text, 'paysync_reconcile_mismatches', { day: '2026-10-16' })).toBe(3);
    expect(sample(text, 'paysync_reconcile_mismatches', { day: '2026-10-03' })).toBe(0);
    expect(sample(text, 'paysync_reconcile_mismatches', { day: '2026-10-02' })).toBeNull();
    expect(sample(text, 'paysync_export_version', { day: '2026-10-16' })).toBe(1);
    expect(sample(text, 'paysync_export_version', { day: '2026-10-01' })).toBeNull();
  });
});
