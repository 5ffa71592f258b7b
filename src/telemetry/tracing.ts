/**
 * The one door from paysync's code to tracing. When tracing is off (the default) nothing is registered
 * here and every call is a no-op that loads no OpenTelemetry code: the logger adds no fields, jobs get no
 * telemetry hook, spans are not made. When it is on, the preload (preload.ts, run by bin/paysync.js
 * before anything else is imported) registers the implementation (otel.ts).
 */
import type { Telemetry } from 'bullmq';

export type SpanRole = 'producer' | 'internal';
export type Attributes = Record<string, string | number | boolean | undefined>;

export interface OpenSpan {
  /** The W3C traceparent of this span (null when tracing is off). */
  readonly traceparent: string | null;
  setAttributes(attributes: Attributes): void;
}

export interface Tracing {
  /** BullMQ's telemetry hook for a Worker: one span per job processed, nothing per poll. */
  workerTelemetry(): Telemetry;
  /** The trace and span ids of the active span, for every log line written within it. */
  logFields(): Record<string, string>;
  /** Attributes on the span of the job being processed, and a link to the span a traceparent names. */
  describeJob(attributes: Attributes, linkTo?: string): void;
  /** Runs `fn` inside a new span (a root span unless one is active), ended when `fn` settles. */
  inSpan<T>(
    name: string,
    role: SpanRole,
    attributes: Attributes,
    fn: (span: OpenSpan) => Promise<T>,
  ): Promise<T>;
}

let registered: Tracing | null = null;

export function registerTracing(tracing: Tracing): void {
  registered = tracing;
}

/** The tracing implementation, or null when tracing is off. */
export function tracing(): Tracing | null {
  return registered;
}

const NO_SPAN: OpenSpan = { traceparent: null, setAttributes: () => undefined };

/** `fn` inside a span when tracing is on; else `fn` alone. */
export function inSpan<T>(
  name: string,
  role: SpanRole,
  attributes: Attributes,
  fn: (span: OpenSpan) => Promise<T>,
): Promise<T> {
  return registered ? registered.inSpan(name, role, attributes, fn) : fn(NO_SPAN);
}
