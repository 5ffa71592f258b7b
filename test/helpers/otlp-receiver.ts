/**
 * An OTLP/HTTP trace receiver on loopback, for the tracing tests: it accepts `POST /v1/traces` in the
 * `http/json` encoding (what paysync sends with OTEL_EXPORTER_OTLP_PROTOCOL=http/json), answers 200 as a
 * collector does, and keeps every span with its resource's service name, flattened for assertions.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

type AnyValue = {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
};
interface KeyValue {
  key: string;
  value: AnyValue;
}

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  attributes: Record<string, string | number | boolean>;
  links: Array<{ traceId: string; spanId: string; attributes: Record<string, string | number | boolean> }>;
  /** Events (exceptions recorded on the span among them): name and attributes. */
  events: Array<{ name: string; attributes: Record<string, string | number | boolean> }>;
}

/** OTLP's span kinds as numbers. */
export const KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;

function flatten(list: KeyValue[] | undefined): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    const v = value.stringValue ?? value.intValue ?? value.doubleValue ?? value.boolValue;
    if (v !== undefined) out[key] = typeof v === 'string' && value.intValue !== undefined ? Number(v) : v;
  }
  return out;
}

interface ExportRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        kind: number;
        attributes?: KeyValue[];
        links?: Array<{ traceId: string; spanId: string; attributes?: KeyValue[] }>;
        events?: Array<{ name: string; attributes?: KeyValue[] }>;
      }>;
    }>;
  }>;
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  /** Every request that was not a well-formed OTLP/JSON export (should stay empty). */
  readonly refused: string[] = [];
  private server: Server | null = null;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        const type = req.headers['content-type'] ?? '';
        if (req.method !== 'POST' || req.url !== '/v1/traces' || !type.startsWith('application/json')) {
          this.refused.push(`${req.method} ${req.url} ${type}`);
          res.writeHead(404).end();
          return;
        }
        try {
          this.take(JSON.parse(body) as ExportRequest);
          res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } catch (error) {
          this.refused.push(`unreadable export: ${(error as Error).message}`);
          res.writeHead(400).end();
        }
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  private take(request: ExportRequest): void {
    for (const rs of request.resourceSpans ?? []) {
      const service = String(flatten(rs.resource?.attributes)['service.name'] ?? '');
      for (const ss of rs.scopeSpans ?? [])
        for (const s of ss.spans ?? [])
          this.spans.push({
            service,
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ? s.parentSpanId : null,
            name: s.name,
            kind: s.kind,
            attributes: flatten(s.attributes),
            links: (s.links ?? []).map((l) => ({
              traceId: l.traceId,
              spanId: l.spanId,
              attributes: flatten(l.attributes),
            })),
            events: (s.events ?? []).map((e) => ({ name: e.name, attributes: flatten(e.attributes) })),
          });
    }
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
