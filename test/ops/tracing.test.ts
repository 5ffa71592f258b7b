/**
 * Tracing, end to end, against an OTLP/HTTP receiver this test starts on loopback (http/json):
 * - `paysync backfill` records its backfill inside a `create sync` span (kind PRODUCER) whose traceparent
 *   is stored with the backfill's row, with its own SQL as child spans;
 * - Redis then loses the queue (this test's keys deleted): the worker re-fills it from PostgreSQL, and
 *   each window still runs as its own trace, a `process sync` span (BullMQ's telemetry hook, kind
 *   CONSUMER) linked to the backfill's span, holding the requests to the service (http) and the SQL (pg);
 * - every log line written in that work carries the trace_id and span_id of a span of its trace;
 * - nothing else is traced: every root span of the worker is a job's (no span per poll for the next
 *   job, per stalled-jobs check, per re-fill or per probe scrape); no span holds any piece of the key;
 * - a tracing variable paysync cannot honour stops the command with one line naming it (exit 2).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { getBackfill } from '../../src/warehouse/backfill-store.js';
import { backfillDays } from '../helpers/backfill.js';
import { harnessEnv, startCli, type CliChild } from '../helpers/cli-child.js';
import { keyRunsIn } from '../helpers/key-runs.js';
import { KIND, OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.js';
import { startHarness, type Harness } from '../helpers/sync-harness.js';

let h: Harness;
let receiver: OtlpReceiver;
const children: CliChild[] = [];
beforeAll(async () => {
  receiver = new OtlpReceiver();
  await receiver.start();
  // Five records a page: each window asks for several pages; a third of the answers are 500s, so the
  // client logs retries inside the windows' spans.
  h = await startHarness({ name: 'tracing', sim: { days: 1, perDay: 60 }, env: { PAGE_SIZE: '5' } });
  h.sim.setSwitches({ serverErrorRate: 0.3 });
});
afterAll(async () => {
  await Promise.all(children.map((c) => c.kill()));
  await h?.close();
  await receiver?.stop();
});

const traceEnv = () => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  OTEL_SERVICE_NAME: 'paysync-tracing-test',
  OTEL_BSP_SCHEDULE_DELAY: '100',
});

/** The spans of one trace, and whether `span` descends from `ancestor` in it. */
function descends(spans: ReceivedSpan[], span: ReceivedSpan, ancestor: ReceivedSpan): boolean {
  const byId = new Map(spans.filter((s) => s.traceId === span.traceId).map((s) => [s.spanId, s]));
  for (
    let at: ReceivedSpan | undefined = span;
    at;
    at = at.parentSpanId ? byId.get(at.parentSpanId) : undefined
  )
    if (at.parentSpanId === ancestor.spanId) return true;
  return false;
}

const isSql = (s: ReceivedSpan) =>
  s.attributes['db.system.name'] === 'postgresql' || s.attributes['db.system'] === 'postgresql';

describe('tracing on (OTEL_EXPORTER_OTLP_ENDPOINT set)', () => {
  it('one trace per window, linked to the backfill span stored with its row, through a Redis loss; logs carry the ids', async () => {
    const env = harnessEnv(h, traceEnv());
    const [from, to] = backfillDays(h, 1);
    const backfill = startCli(['backfill', '--from', from, '--to', to, '--stream', 'payments'], env);
    children.push(backfill);
    expect(await backfill.exited).toBe(0);
    const id = Number(/backfill #(\d+)/.exec(backfill.stdout())?.[1]);

    // The command ended, so its spans were sent (the SDK flushes before the process exits).
    const creates = receiver.spans.filter((s) => s.name === 'create sync');
    expect(creates).toHaveLength(1);
    const create = creates[0] as ReceivedSpan;
    expect(create).toMatchObject({
      service: 'paysync-tracing-test',
      kind: KIND.producer,
      parentSpanId: null,
      attributes: {
        'messaging.operation.type': 'create',
        'messaging.destination.name': 'sync',
        'paysync.backfill.id': id,
        'paysync.backfill.from': from,
      },
    });
    const stored = await h.runtime.pool.query<{ trace_parent: string }>(
      'SELECT trace_parent FROM reporting.backfills WHERE id = $1',
      [id],
    );
    expect(stored.rows[0]?.trace_parent).toBe(`00-${create.traceId}-${create.spanId}-01`);
    expect(receiver.spans.some((s) => isSql(s) && descends(receiver.spans, s, create))).toBe(true);

    // Redis loses the queue (this test's keys only): the worker re-fills it from PostgreSQL.
    const keys = await h.runtime.redis.keys(`${h.prefix}*`);
    if (keys.length) await h.runtime.redis.del(...keys);
    const worker = startCli(['worker', '--no-schedules'], { ...env, LOG_LEVEL: 'debug' });
    children.push(worker);
    for (let i = 0; (await getBackfill(h.runtime.pool, id))?.state !== 'done'; i++) {
      if (worker.process.exitCode !== null || i > 1_200)
        throw new Error(`the backfill did not finish: ${worker.stderr().slice(-3_000)}`);
      await new Promise((r) => setTimeout(r, 100)); // polling PostgreSQL for an observed event
    }
    worker.process.kill('SIGTERM');
    expect(await worker.exited).toBe(0); // drained: its spans are sent before it exits

    const summary = await getBackfill(h.runtime.pool, id);
    const spans = receiver.spans.filter((s) => s.service === 'paysync-tracing-test');
    const windows = spans.filter(
      (s) => s.name === 'process sync' && s.attributes['paysync.backfill.id'] === id,
    );
    // every item ran at least once (a failed attempt is a span of its own)
    expect(new Set(windows.map((w) => w.attributes['messaging.message.id'])).size).toBe(summary?.total);
    for (const w of windows) {
      expect(w).toMatchObject({
        kind: KIND.consumer,
        parentSpanId: null,
        attributes: {
          'messaging.system': 'bullmq',
          'messaging.operation.type': 'process',
          'paysync.job.name': 'window',
          'paysync.stream': 'payments',
        },
      });
      expect(w.traceId).not.toBe(create.traceId); // a trace per window…
      expect(w.links).toEqual([
        { traceId: create.traceId, spanId: create.spanId, attributes: { 'paysync.link': 'backfill' } },
      ]); // …linked to the backfill's span, even after the re-fill
    }
    // A window's trace runs from the job to the requests and the SQL.
    const complete = windows.filter(
      (w) =>
        spans.some(
          (s) =>
            s.kind === KIND.client && s.attributes['http.request.method'] === 'GET' && descends(spans, s, w),
        ) && spans.some((s) => isSql(s) && descends(spans, s, w)),
    );
    expect(complete.length).toBeGreaterThan(0);
    expect(
      spans.some((s) => s.kind === KIND.client && String(s.attributes['url.full']).startsWith(h.sim.url)),
    ).toBe(true);

    // Nothing but jobs starts a trace in the worker: no span per poll, stalled check, re-fill or scrape.
    const workerRoots = spans.filter((s) => s.parentSpanId === null && s.name !== 'create sync');
    expect(new Set(workerRoots.map((s) => s.name))).toEqual(new Set(['process sync']));
    expect(spans.filter((s) => /getNextJob|Stalled|close|rateLimit/.test(s.name))).toEqual([]);

    // Every log line of that work carries the ids of a span of its trace.
    const lines = worker
      .stderr()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { msg: string; trace_id?: string; span_id?: string });
    const retries = lines.filter((l) => l.msg.startsWith('upstream attempt failed, retrying'));
    expect(retries.length).toBeGreaterThan(0);
    const known = new Set(spans.map((s) => `${s.traceId}/${s.spanId}`));
    const windowTraces = new Set(windows.map((w) => w.traceId));
    for (const line of retries) {
      expect({ msg: line.msg, ids: `${line.trace_id}/${line.span_id}` }).toEqual({
        msg: line.msg,
        ids: expect.stringMatching(/^[0-9a-f]{32}\/[0-9a-f]{16}$/),
      });
      expect(known.has(`${line.trace_id}/${line.span_id}`)).toBe(true);
      expect(windowTraces.has(line.trace_id as string)).toBe(true);
    }
    // The key is in no span: not in a name, an attribute (URLs, statements), a link or an event.
    const text = JSON.stringify(
      receiver.spans.map((s) => [s.name, s.attributes, s.links.map((l) => l.attributes), s.events]),
    );
    expect(keyRunsIn(text, h.key)).toEqual([]);
    expect(receiver.refused).toEqual([]);
  }, 240_000);

  it('refuses a tracing variable it cannot honour: one line naming it, exit 2', async () => {
    for (const [name, value, message] of [
      ['OTEL_TRACES_EXPORTER', 'zipkin', 'OTEL_TRACES_EXPORTER must be otlp or none (got "zipkin")'],
      [
        'OTEL_EXPORTER_OTLP_PROTOCOL',
        'grpc',
        'OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json',
      ],
    ] as const) {
      const child = startCli(['status'], { ...harnessEnv(h, traceEnv()), [name]: value });
      children.push(child);
      expect(await child.exited).toBe(2);
      const lines = child.stderr().split('\n').filter(Boolean);
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(`paysync: ${message}`);
    }
  });
});
