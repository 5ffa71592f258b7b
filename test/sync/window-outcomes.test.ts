/**
 * No window ends without its row: whatever ends a run (the service down, paging that cannot end, a body
 * the interface does not allow, a write PostgreSQL refuses), `reporting.sync_windows` holds the window
 * failed or incomplete with its reason code and words, the metric counts it by reason, and `status`
 * names the reason with what to do. Real HTTP (the simulator), PostgreSQL and Redis.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { PaysyncMetrics } from '../../src/ops/metrics.js';
import { byReason, failingWindows, renderFailingReasons } from '../../src/ops/window-failures.js';
import { tickPayments } from '../../src/sync/tick.js';
import { startHarness, type Harness } from '../helpers/sync-harness.js';

let h: Harness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

interface Row {
  outcome: string;
  reason_code: string | null;
  detail: string | null;
  failures: number;
  kind: string;
}

async function rows(hh: Harness, stream = 'payments'): Promise<Row[]> {
  const { rows: found } = await hh.runtime.pool.query<Row>(
    `SELECT outcome, reason_code, detail, failures, kind FROM reporting.sync_windows
      WHERE stream = $1 ORDER BY window_start`,
    [stream],
  );
  return found;
}

async function tick(hh: Harness, metrics?: PaysyncMetrics) {
  const deps = hh.runtime.syncContext(hh.settings.sources[0]!, metrics?.onWindow);
  return tickPayments(deps);
}

describe('every window ends with its row', () => {
  it('the service down: each window failed SERVICE_UNAVAILABLE, not counted towards a blocked day', async () => {
    h = await startHarness({ name: 'outcome-outage', env: { UPSTREAM_RETRIES: '1' } });
    h.sim.setSwitches({ outage: 'unavailable' });
    const metrics = new PaysyncMetrics();
    const report = await tick(h, metrics);
    expect(report.windows.length).toBeGreaterThan(0);
    expect(report.windows.every((w) => w.outcome === 'failed')).toBe(true);
    expect(report.windows.every((w) => w.reasonCode === 'SERVICE_UNAVAILABLE')).toBe(true);
    const found = await rows(h);
    expect(found).toHaveLength(report.windows.length);
    for (const r of found) {
      expect(r).toMatchObject({ outcome: 'failed', reason_code: 'SERVICE_UNAVAILABLE', failures: 0 });
      expect(r.detail).toMatch(/503/);
    }
    const text = await metrics.registry.metrics();
    expect(text).toMatch(
      new RegExp(
        `paysync_window_failures_total\\{source="default",stream="payments",reason="SERVICE_UNAVAILABLE"\\} ${report.windows.length}`,
      ),
    );
    const reasons = byReason(await failingWindows(h.runtime.pool));
    expect(reasons.map((r) => r.code)).toEqual(['SERVICE_UNAVAILABLE']);
    const printed = renderFailingReasons(reasons, (s) => s);
    expect(printed).toMatch(/SERVICE_UNAVAILABLE \(outage\): \d+ window\(s\) of default\/payments/);
    expect(printed).toMatch(/what to do: nothing at first/);

    // the service back: the next tick completes the windows and nothing is failing any more
    h.sim.setSwitches({ outage: 'none' });
    const healed = await tick(h);
    expect(healed.windows.every((w) => w.outcome === 'complete')).toBe(true);
    expect(await failingWindows(h.runtime.pool)).toEqual([]);
    for (const r of await rows(h)) expect(r).toMatchObject({ reason_code: null, failures: 0 });
  });

  it('a service that ignores `page`: PAGE_IGNORED, counted towards a blocked day', async () => {
    h = await startHarness({ name: 'outcome-page', env: { UPSTREAM_RETRIES: '0' } });
    h.sim.setSwitches({ ignorePage: true });
    await tick(h);
    await tick(h);
    const failed = (await rows(h)).filter((r) => r.outcome !== 'complete');
    expect(failed.length).toBeGreaterThan(0);
    for (const r of failed) {
      expect(r.reason_code).toBe('PAGE_IGNORED');
      expect(r.failures).toBe(2);
      expect(r.detail).toMatch(/ignores `page`/);
    }
  });

  it('a body the interface does not allow: MALFORMED_RESPONSE', async () => {
    h = await startHarness({ name: 'outcome-protocol', env: { UPSTREAM_RETRIES: '0' } });
    h.sim.setSwitches({ notJsonRate: 1 });
    const report = await tick(h);
    expect(report.windows.every((w) => w.reasonCode === 'MALFORMED_RESPONSE')).toBe(true);
    const found = await rows(h);
    expect(found.length).toBeGreaterThan(0);
    expect(found.every((r) => r.outcome === 'failed' && r.reason_code === 'MALFORMED_RESPONSE')).toBe(true);
  });

  it('a write PostgreSQL refuses: WAREHOUSE_WRITE_FAILED, with its message', async () => {
    h = await startHarness({ name: 'outcome-write' });
    await h.runtime.pool.query(`
      CREATE FUNCTION reporting.test_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'the disk is full (a test)' USING ERRCODE = 'P0001'; END $$;
      CREATE TRIGGER test_refuse BEFORE INSERT ON reporting.payments
        FOR EACH ROW EXECUTE FUNCTION reporting.test_refuse();`);
    const report = await tick(h); // not one of paysync's codes: retried by the next tick, the tick goes on
    expect(report.windows.some((w) => w.reasonCode === 'WAREHOUSE_WRITE_FAILED')).toBe(true);
    const found = (await rows(h)).filter((r) => r.outcome !== 'complete');
    expect(found.length).toBeGreaterThan(0);
    for (const r of found) {
      expect(r).toMatchObject({ outcome: 'failed', reason_code: 'WAREHOUSE_WRITE_FAILED', failures: 1 });
      expect(r.detail).toMatch(/disk is full/);
    }
  });
});
