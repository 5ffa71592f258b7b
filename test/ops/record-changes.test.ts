/**
 * The service's records change shape (two fields the interface does not list on every payment, a listed
 * field missing from some): after a sync over real HTTP, the change is announced where people look —
 * `paysync status` (text and JSON), `paysync probe`, the status page, a metric — without changing
 * status's exit code, and stays until `paysync probe --ack FIELD` records who took note of it, and when.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { userInfo } from 'node:os';
import { harnessEnv, runCli } from '../helpers/cli-run.js';
import { httpGet, sample, startOpsStack, type OpsStack } from '../helpers/ops.js';
import { startHarness, syncAll, type Harness } from '../helpers/sync-harness.js';

let h: Harness;
let stack: OpsStack;
let env: Record<string, string>;

beforeAll(async () => {
  h = await startHarness({
    name: 'record_changes',
    sim: { days: 2, perDay: 30 },
    env: { METRICS_PORT: '0', DASHBOARD_PORT: '0' },
  });
  h.sim.setSwitches({
    paymentExtraFields: { fee_amount: '125.50', channel: '"ussd"' },
    fieldChanges: [{ stream: 'payments', field: 'phone', to: 'missing', rate: 0.3 }],
  });
  await syncAll(h);
  stack = await startOpsStack(h);
  env = harnessEnv(h);
}, 60_000);
afterAll(async () => {
  await stack?.close();
  await h?.close();
});

const shapeChanges = async (change: string) =>
  sample((await httpGet(`${stack.ops.metricsUrl}/metrics`)).text, 'paysync_record_shape_changes', {
    stream: 'payments',
    change,
  });

describe("the service's records changed shape", () => {
  let exitBefore: number;

  it('is announced by paysync status, text and JSON, with what, where, since when and on how many records', async () => {
    const stored = h.sim.payments(h.org).length;
    const { rows } = await h.runtime.pool.query(
      `SELECT count(*)::int AS n FROM reporting.sync_rejects WHERE reason LIKE 'phone: %'`,
    );
    const quarantined = rows[0].n as number;
    expect(quarantined).toBeGreaterThan(0);

    const text = await runCli(['status'], env);
    exitBefore = text.status;
    expect(text.stdout).toContain("the service's records changed shape");
    const lines = text.stdout.split('\n');
    const line = (needle: string) => lines.find((l) => l.includes(needle)) ?? `(no line with ${needle})`;
    const landed = stored - quarantined;
    expect(line('new field fee_amount')).toMatch(
      new RegExp(
        `^  payments: new field fee_amount, first seen \\S+Z \\(source default\\), on ${landed} stored record\\(s\\), e\\.g\\. 125\\.50$`,
      ),
    );
    expect(line('new field channel')).toContain('e.g. "ussd"');
    expect(line('field phone')).toContain(
      `field phone no longer sent (expected string or null, received nothing)`,
    );
    expect(line('field phone')).toContain(`${quarantined} record(s) quarantined`);

    const json = JSON.parse((await runCli(['status', '--json'], env)).stdout);
    expect(json.recordChanges.total).toBe(3);
    expect(json.recordChanges.sightings.map((s: { field: string }) => s.field).sort()).toEqual([
      'channel',
      'fee_amount',
      'phone',
    ]);
    expect(json.recordChanges.sightings[0]).toMatchObject({ stream: 'payments', acknowledgedAt: null });
  }, 60_000);

  it('is listed by paysync probe, on the status page and in a metric', async () => {
    const probe = await runCli(['probe'], env);
    expect(probe.status).toBe(0);
    expect(probe.stdout).toContain("the service's records changed shape");
    expect(probe.stdout).toContain('payments: new field fee_amount');

    const page = await httpGet(`${stack.ops.dashboardUrl}/status`);
    expect(page.text).toContain("<h2>The service's records changed shape</h2>");
    expect(page.text).toContain('payments: new field fee_amount');
    expect(page.text).toContain('payments: field phone no longer sent');

    expect(await shapeChanges('added')).toBe(2);
    expect(await shapeChanges('missing')).toBe(1);
    expect(await shapeChanges('retyped')).toBe(0);
  }, 60_000);

  it('is acknowledged field by field with who and when, and then no longer announced; the exit code never moved', async () => {
    const ack = await runCli(['probe', '--ack', 'fee_amount', '--by', 'alice'], env);
    expect(ack).toMatchObject({ status: 0, stderr: '' });
    expect(ack.stdout).toMatch(/^acknowledged by alice at \S+Z: payments: new field fee_amount/);
    const again = await runCli(['probe', '--ack', 'fee_amount'], env);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('no unacknowledged change of field "fee_amount"');
    expect(await shapeChanges('added')).toBe(1);

    expect((await runCli(['probe', '--ack', 'channel', '--stream', 'payments'], env)).status).toBe(0);
    expect((await runCli(['probe', '--ack', 'phone', '--stream', 'transfers'], env)).status).toBe(1);
    const { rows } = await h.runtime.pool.query(
      `SELECT field, acknowledged_by, acknowledged_at IS NOT NULL AS acknowledged
         FROM reporting.field_sightings ORDER BY field`,
    );
    expect(rows).toEqual([
      { field: 'channel', acknowledged_by: userInfo().username, acknowledged: true },
      { field: 'fee_amount', acknowledged_by: 'alice', acknowledged: true },
      { field: 'phone', acknowledged_by: null, acknowledged: false },
    ]);
    const left = await runCli(['status'], env);
    expect(left.stdout).not.toContain('fee_amount');
    expect(left.stdout).toContain('field phone no longer sent');

    expect((await runCli(['probe', '--ack', 'phone', '--by', 'bob'], env)).status).toBe(0);
    const none = await runCli(['status'], env);
    expect(none.stdout).not.toContain('records changed shape');
    expect(none.status).toBe(exitBefore);
    expect(await shapeChanges('missing')).toBe(0);
    expect((await httpGet(`${stack.ops.dashboardUrl}/status`)).text).not.toContain('records changed shape');

    // a sync that sees them again announces nothing new
    await syncAll(h);
    expect((await runCli(['status'], env)).stdout).not.toContain('records changed shape');
  }, 60_000);

  it('refuses --ack without a field, and --stream or --by without --ack (exit 2)', async () => {
    expect((await runCli(['probe', '--ack', ''], env)).status).toBe(2);
    expect((await runCli(['probe', '--by', 'alice'], env)).status).toBe(2);
    expect((await runCli(['probe', '--ack', 'x', '--stream', 'refunds'], env)).status).toBe(2);
  });
});
