/**
 * When tracing is on, from the standard OpenTelemetry variables alone: off by default and with any
 * variable that says so; on with an OTLP endpoint, over http/protobuf unless http/json is asked for; one
 * line naming the variable for what paysync cannot honour.
 */
import { describe, expect, it } from '@jest/globals';
import { decideTracing, TracingSettingError } from '../../src/telemetry/otel-settings.js';

const ENDPOINT = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' };

describe('decideTracing', () => {
  it('is off without an endpoint, whatever else is set', () => {
    expect(decideTracing({})).toEqual({ on: false, why: 'no OTLP endpoint is set' });
    expect(decideTracing({ OTEL_SERVICE_NAME: 'paysync-eu', OTEL_TRACES_SAMPLER: 'always_on' }).on).toBe(
      false,
    );
    expect(decideTracing({ OTEL_EXPORTER_OTLP_ENDPOINT: '  ' }).on).toBe(false);
  });

  it('is on with an endpoint, over http/protobuf by default', () => {
    expect(decideTracing(ENDPOINT)).toEqual({
      on: true,
      protocol: 'http/protobuf',
      endpointVariable: 'OTEL_EXPORTER_OTLP_ENDPOINT',
    });
    expect(
      decideTracing({
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://collector/v1/traces',
        OTEL_TRACES_EXPORTER: 'otlp',
      }),
    ).toMatchObject({ on: true, endpointVariable: 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' });
  });

  it('takes the traces protocol before the general one', () => {
    expect(decideTracing({ ...ENDPOINT, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })).toMatchObject({
      protocol: 'http/json',
    });
    expect(
      decideTracing({
        ...ENDPOINT,
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
        OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'http/protobuf',
      }),
    ).toMatchObject({ protocol: 'http/protobuf' });
  });

  it('is off when disabled or with no exporter, even with an endpoint', () => {
    expect(decideTracing({ ...ENDPOINT, OTEL_SDK_DISABLED: 'true' }).on).toBe(false);
    expect(decideTracing({ ...ENDPOINT, OTEL_TRACES_EXPORTER: 'none' }).on).toBe(false);
  });

  it('refuses what it cannot honour, naming the variable', () => {
    const refusal = (env: NodeJS.ProcessEnv) => {
      try {
        decideTracing(env);
      } catch (error) {
        expect(error).toBeInstanceOf(TracingSettingError);
        return (error as Error).message;
      }
      throw new Error(`accepted ${JSON.stringify(env)}`);
    };
    expect(refusal({ ...ENDPOINT, OTEL_TRACES_EXPORTER: 'jaeger' })).toMatch(
      /^OTEL_TRACES_EXPORTER must be otlp or none/,
    );
    expect(refusal({ ...ENDPOINT, OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' })).toMatch(
      /^OTEL_EXPORTER_OTLP_TRACES_PROTOCOL must be http\/protobuf or http\/json/,
    );
    expect(refusal({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toMatch(
      /^OTEL_EXPORTER_OTLP_ENDPOINT must be an http:\/\/ or https:\/\/ URL/,
    );
  });
});
