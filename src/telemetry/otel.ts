/**
 * Tracing on: the OpenTelemetry SDK, its exporter and instrumentations, and the implementation of
 * tracing.ts. Loaded by the preload only when an OTLP endpoint is set, after the ESM loader hook is
 * registered and before any of paysync's modules (so `pg` and `node:http` are patched when they load).
 *
 * What makes spans:
 * - every job a worker processes: BullMQ's telemetry hook (bullmq-otel) makes the `process sync` span
 *   (kind CONSUMER); every other span BullMQ would make (one per blocking poll for the next job, per
 *   stalled-jobs check, per close) is dropped here, so an idle worker exports nothing;
 * - every request to the service (the http instrumentation) and every SQL statement (the pg
 *   instrumentation), only inside a span: probes, scrapes and idle pool traffic make none, and the ops
 *   ports' incoming requests are not traced;
 * - `paysync backfill` (`create sync`, kind PRODUCER), whose traceparent is stored with the backfill.
 * The SDK reads the standard variables: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (default service
 * name `paysync`), OTEL_TRACES_SAMPLER(_ARG), OTEL_BSP_*, and the exporter OTEL_EXPORTER_OTLP_* (endpoint,
 * headers, timeout, compression).
 */
import {
  context,
  isSpanContextValid,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes as OtelAttributes,
  type Span,
} from '@opentelemetry/api';
import { OTLPTraceExporter as JsonTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { Span as BullSpan, Telemetry } from 'bullmq';
import { BullMQOtel } from 'bullmq-otel';
import type { OtlpProtocol } from './otel-settings.js';
import { registerTracing, type Attributes, type OpenSpan, type SpanRole, type Tracing } from './tracing.js';

const TRACER = 'paysync';

/** A span BullMQ asks for and paysync does not want: keeps the context as it is and records nothing. */
const DROPPED: BullSpan = {
  setSpanOnContext: (ctx: unknown) => ctx,
  setAttribute: () => undefined,
  setAttributes: () => undefined,
  addEvent: () => undefined,
  recordException: () => undefined,
  end: () => undefined,
};

function defined(attributes: Attributes): OtelAttributes {
  return Object.fromEntries(Object.entries(attributes).filter(([, v]) => v !== undefined)) as OtelAttributes;
}

/** The W3C traceparent of a span. */
function traceparentOf(span: Span): string | null {
  const carrier: Record<string, string> = {};
  propagation.inject(trace.setSpan(context.active(), span), carrier);
  return carrier.traceparent ?? null;
}

/** The span context a W3C traceparent names, or null when it is not one. */
function spanContextOf(traceparent: string) {
  const found = trace.getSpanContext(propagation.extract(context.active(), { traceparent }));
  return found && isSpanContextValid(found) ? found : null;
}

function workerTelemetry(): Telemetry {
  const otel = new BullMQOtel({ tracerName: TRACER });
  return {
    contextManager: otel.contextManager,
    tracer: {
      startSpan: (name, options, ctx) =>
        options?.kind === SpanKind.CONSUMER ? otel.tracer.startSpan(name, options, ctx) : DROPPED,
    },
  };
}

function implementation(): Tracing {
  const tracer = trace.getTracer(TRACER);
  return {
    workerTelemetry,
    logFields(): Record<string, string> {
      const found = trace.getActiveSpan()?.spanContext();
      return found && isSpanContextValid(found) ? { trace_id: found.traceId, span_id: found.spanId } : {};
    },
    describeJob(attributes, linkTo) {
      const span = trace.getActiveSpan();
      if (!span) return;
      span.setAttributes(defined(attributes));
      const linked = linkTo ? spanContextOf(linkTo) : null;
      if (linked) span.addLink({ context: linked, attributes: { 'paysync.link': 'backfill' } });
    },
    inSpan<T>(name: string, role: SpanRole, attributes: Attributes, fn: (span: OpenSpan) => Promise<T>) {
      const kind = role === 'producer' ? SpanKind.PRODUCER : SpanKind.INTERNAL;
      return tracer.startActiveSpan(name, { kind, attributes: defined(attributes) }, async (span) => {
        const open: OpenSpan = {
          traceparent: traceparentOf(span),
          setAttributes: (more) => span.setAttributes(defined(more)),
        };
        try {
          return await fn(open);
        } catch (error) {
          span.recordException(error as Error);
          span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error).message });
          throw error;
        } finally {
          span.end();
        }
      });
    },
  };
}

/** Starts the SDK (exporting over OTLP/HTTP in `protocol`) and registers the implementation. */
export function startTracing(protocol: OtlpProtocol): void {
  const exporter = protocol === 'http/json' ? new JsonTraceExporter() : new ProtobufTraceExporter();
  const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'paysync' }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  provider.register(); // AsyncLocalStorage context, W3C trace context and baggage propagation
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        disableIncomingRequestInstrumentation: true,
        requireParentforOutgoingSpans: true,
      }),
      new PgInstrumentation({ requireParentSpan: true }),
    ],
  });
  registerTracing(implementation());
  // Spans still batched are sent before the process ends on its own (a command, a drained worker).
  process.once('beforeExit', () => void provider.shutdown());
}
