/**
 * Whether tracing is on, from the standard OpenTelemetry variables alone (a pure decision, tested without
 * a collector). Off unless an OTLP endpoint is set (`OTEL_EXPORTER_OTLP_ENDPOINT`, or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`); `OTEL_SDK_DISABLED=true` and `OTEL_TRACES_EXPORTER=none` turn it
 * off whatever else is set. What paysync cannot honour is refused with one line naming the variable
 * (exit 2), never ignored: an exporter other than OTLP, gRPC (only OTLP over HTTP is shipped), an
 * endpoint that is not an http(s) URL. The exporter reads the rest itself (headers, timeout,
 * compression), and the SDK the sampler, resource and batch variables.
 */

export type OtlpProtocol = 'http/protobuf' | 'http/json';

export type TracingDecision =
  { on: false; why: string } | { on: true; protocol: OtlpProtocol; endpointVariable: string };

/** A variable holds a value paysync cannot trace with: the message names it (exit 2). */
export class TracingSettingError extends Error {}

const read = (env: NodeJS.ProcessEnv, name: string): string | undefined => {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
};

function checkEndpoint(name: string, value: string): void {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new TracingSettingError(`${name} must be an http:// or https:// URL (got "${value}")`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new TracingSettingError(`${name} must be an http:// or https:// URL (got "${value}")`);
}

export function decideTracing(env: NodeJS.ProcessEnv): TracingDecision {
  if (read(env, 'OTEL_SDK_DISABLED')?.toLowerCase() === 'true')
    return { on: false, why: 'OTEL_SDK_DISABLED=true' };
  const exporter = read(env, 'OTEL_TRACES_EXPORTER')?.toLowerCase();
  if (exporter === 'none') return { on: false, why: 'OTEL_TRACES_EXPORTER=none' };
  if (exporter !== undefined && exporter !== 'otlp')
    throw new TracingSettingError(`OTEL_TRACES_EXPORTER must be otlp or none (got "${exporter}")`);
  const endpointVariable = ['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', 'OTEL_EXPORTER_OTLP_ENDPOINT'].find(
    (name) => read(env, name) !== undefined,
  );
  if (!endpointVariable) return { on: false, why: 'no OTLP endpoint is set' };
  checkEndpoint(endpointVariable, read(env, endpointVariable) as string);
  const protocolVariable = ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL'].find(
    (name) => read(env, name) !== undefined,
  );
  const protocol = protocolVariable ? (read(env, protocolVariable) as string) : 'http/protobuf';
  if (protocol !== 'http/protobuf' && protocol !== 'http/json')
    throw new TracingSettingError(
      `${protocolVariable} must be http/protobuf or http/json (got "${protocol}"; paysync exports OTLP over HTTP only, port 4318)`,
    );
  return { on: true, protocol, endpointVariable };
}
