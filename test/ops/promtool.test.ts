/**
 * What ops drop into Prometheus and Grafana, checked by Prometheus's own tool (promtool, Debian package
 * `prometheus`):
 * - the worker's /metrics after a real sync passes `promtool check metrics`, with Node's process metrics
 *   under their standard names and paysync's own under `paysync_`;
 * - ops/alerts.yml passes `promtool check rules` and its unit tests (ops/alerts.test.yml: each alert fires
 *   on its condition and stays quiet otherwise) pass `promtool test rules`;
 * - ops/grafana-dashboard.json is JSON whose queries name only metrics the worker serves.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Queue } from 'bullmq';
import { startHarness, type Harness } from '../helpers/sync-harness.js';
import { httpGet, settled, startOpsStack, type OpsStack } from '../helpers/ops.js';
import { requireTool, run } from '../helpers/processes.js';

const ROOT = resolve(import.meta.dirname, '../..');

let h: Harness | null = null;
let stack: OpsStack | null = null;
afterEach(async () => {
  await stack?.close();
  await h?.close();
  stack = null;
  h = null;
});

/**
 * The series names an exposition declares (`# TYPE` lines: a counter not yet incremented is declared
 * but has no sample), with a histogram's _bucket, _sum and _count.
 */
function servedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name as string);
    if (type === 'histogram' || type === 'summary')
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
}

/** A worker's /metrics after a sync tick, a reconcile and an export result: every paysync series set. */
async function scrape(): Promise<string> {
  h = await startHarness({ name: 'promtool', env: { METRICS_PORT: '0' } });
  stack = await startOpsStack(h);
  stack.metrics.withProcessMetrics();
  h.sim.setSwitches({ serverErrorRate: 0.2 }); // retries too
  const queue = stack.running.queue as unknown as Queue;
  for (const stream of ['payments', 'transfers']) {
    const job = await queue.add('tick', { source: 'default', stream }, { jobId: `t-${stream}` });
    expect(await settled(queue, job.id as string)).toBe('completed');
  }
  stack.metrics.recordReconcileResult('2026-11-20', 0);
  stack.metrics.recordExportResult('2026-11-20', 1);
  stack.metrics.onProbeChange('default', 'date-bounds');
  const { status, text } = await httpGet(`${stack.ops.metricsUrl}/metrics`);
  expect(status).toBe(200);
  return text;
}

describe('the worker /metrics', () => {
  it('passes promtool check metrics, with standard process metric names', async () => {
    const promtool = requireTool('promtool', 'prometheus');
    const text = await scrape();
    const names = servedNames(text);
    for (const standard of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
    ])
      expect({ standard, served: names.has(standard) }).toEqual({ standard, served: true });
    const foreign = [...names].filter((n) => !n.startsWith('paysync_') && !/^(process|nodejs)_/.test(n));
    expect(foreign).toEqual([]);
    expect([...names].filter((n) => /^paysync_(process|nodejs)_/.test(n))).toEqual([]);

    const dir = mkdtempSync(join(tmpdir(), 'paysync-promtool-'));
    try {
      writeFileSync(join(dir, 'metrics.txt'), text);
      const r = await run('sh', ['-c', `"${promtool}" check metrics < metrics.txt`], { cwd: dir });
      expect({ code: r.code, problems: r.stdout + r.stderr }).toEqual({ code: 0, problems: '' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('ops/alerts.yml', () => {
  it('passes promtool check rules and its unit tests (each alert fires on its condition, quiet otherwise)', async () => {
    const promtool = requireTool('promtool', 'prometheus');
    const checked = await run(promtool, ['check', 'rules', 'alerts.yml'], { cwd: join(ROOT, 'ops') });
    const rules = readFileSync(join(ROOT, 'ops/alerts.yml'), 'utf8').match(/^\s+- alert: /gm)?.length;
    expect({ code: checked.code, out: checked.stdout }).toEqual({
      code: 0,
      out: expect.stringContaining(`SUCCESS: ${rules} rules found`),
    });
    const tested = await run(promtool, ['test', 'rules', 'alerts.test.yml'], { cwd: join(ROOT, 'ops') });
    expect({ code: tested.code, out: tested.stdout + tested.stderr }).toEqual({
      code: 0,
      out: expect.stringContaining('SUCCESS'),
    });
  });

  it('has a unit test for every alert it defines', () => {
    const alerts = [...readFileSync(join(ROOT, 'ops/alerts.yml'), 'utf8').matchAll(/- alert: (\w+)/g)].map(
      (m) => m[1],
    );
    const tested = new Set(
      [...readFileSync(join(ROOT, 'ops/alerts.test.yml'), 'utf8').matchAll(/alertname: (\w+)/g)].map(
        (m) => m[1],
      ),
    );
    expect(alerts.length).toBeGreaterThan(0);
    expect(alerts.filter((a) => !tested.has(a))).toEqual([]);
  });
});

describe('ops/grafana-dashboard.json', () => {
  it('queries only metrics the worker serves, and covers lag, throughput, rejects, reconcile and queue depth', async () => {
    interface Panel {
      title: string;
      targets: Array<{ expr: string }>;
    }
    const dashboard = JSON.parse(readFileSync(join(ROOT, 'ops/grafana-dashboard.json'), 'utf8')) as {
      panels: Panel[];
    };
    const text = await scrape();
    const served = servedNames(text);
    const exprs = dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr));
    // Metric names in a PromQL expression: identifiers followed by `{`, `[`, `)` or space that are not
    // functions, keywords or label names.
    const used = new Set(
      exprs.flatMap((e) =>
        [...e.matchAll(/\b((?:paysync|process|nodejs)_[a-z0-9_]+)/g)].map((m) => m[1] as string),
      ),
    );
    expect([...used].filter((name) => !served.has(name)).sort()).toEqual([]);
    // `up` is Prometheus's own; everything else must come from the worker.
    for (const needed of [
      'paysync_sync_lag_seconds',
      'paysync_records_synced_total',
      'paysync_rejects_total',
      'paysync_reconcile_mismatches',
      'paysync_queue_jobs',
    ])
      expect({ needed, used: used.has(needed) }).toEqual({ needed, used: true });
  });
});
