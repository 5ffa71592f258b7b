/**
 * The one logger (pino): JSON lines by default, human-readable when LOG_FORMAT=pretty or on a terminal.
 * Anything that could carry the API key is redacted by path, and Secret values print as [redacted]. Given
 * `secrets`, the logger also scrubs their values (in every form: scrub.ts) from every line it writes, so a
 * key inside a URL, an error message or an unexpected field cannot reach the output either.
 */
import { pino, type Logger } from 'pino';
import { secretScrubber } from './scrub.js';
import { tracing } from './telemetry/tracing.js';

export type { Logger };

const REDACT_PATHS = [
  'apiKey',
  '*.apiKey',
  'headers["x-api-key"]',
  '*.headers["x-api-key"]',
  'req.headers["x-api-key"]',
  'options.headers["x-api-key"]',
  '*.options.headers["x-api-key"]',
  'headers.authorization',
  '*.headers.authorization',
  'PAYMENTS_API_KEY',
];

export interface LogOptions {
  level?: string;
  format?: 'json' | 'pretty' | undefined;
  destination?: NodeJS.WritableStream;
  /** Values never to write (the API keys): replaced by [redacted] wherever they appear in a line. */
  secrets?: ReadonlyArray<{ reveal(): string } | string>;
}

/** Wraps a destination so that no written line holds any of `secrets`, in any form or run (scrub.ts). */
export function scrubbing(
  out: pino.DestinationStream,
  secrets: ReadonlyArray<{ reveal(): string } | string>,
): pino.DestinationStream {
  const values = secrets.map((s) => (typeof s === 'string' ? s : s.reveal())).filter((v) => v.length > 0);
  if (values.length === 0) return out;
  const scrub = secretScrubber(values);
  return {
    write(line: string) {
      out.write(scrub(line));
    },
  };
}

export function createLogger(options: LogOptions = {}): Logger {
  const destination = options.destination ?? process.stderr;
  // With tracing on, every line written inside a span carries its trace_id and span_id.
  const traced = tracing();
  const pretty =
    options.format === 'pretty' || (options.format === undefined && Boolean(process.stderr.isTTY));
  const stream = pretty ? prettyStream(destination) : (destination as pino.DestinationStream);
  return pino(
    {
      level: options.level ?? 'info',
      base: undefined,
      redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      formatters: pretty ? {} : { level: (label) => ({ level: label }) },
      ...(traced ? { mixin: () => traced.logFields() } : {}),
    },
    options.secrets?.length ? scrubbing(stream, options.secrets) : stream,
  );
}

/** A small human-readable line format, so a terminal user needs no extra package. */
function prettyStream(out: NodeJS.WritableStream): pino.DestinationStream {
  const names: Record<number, string> = {
    10: 'TRACE',
    20: 'DEBUG',
    30: 'INFO',
    40: 'WARN',
    50: 'ERROR',
    60: 'FATAL',
  };
  return {
    write(line: string) {
      const { level, time, msg, ...rest } = JSON.parse(line) as Record<string, unknown>;
      const when = new Date(time as number).toISOString().slice(11, 19);
      const fields = Object.entries(rest)
        .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
        .join(' ');
      out.write(
        `${when} ${(names[level as number] ?? String(level)).padEnd(5)} ${String(msg ?? '')}${fields ? `  ${fields}` : ''}\n`,
      );
    },
  };
}

/** A logger that writes nothing (tests, library use). */
export const silentLogger: Logger = pino({ level: 'silent' });
