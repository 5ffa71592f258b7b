/**
 * Every byte the CLI writes to stdout and stderr goes through neutraliseControls (src/terminal-text.ts):
 * tables, `--json`, messages, log lines, whatever command prints them, now or later, so no value from the
 * service can drive the terminal. `guardOutput` is installed once, by main.ts, before any command runs.
 * The progress bar alone draws with control characters of its own (CR, erase line): `writeRaw` is for it,
 * and it neutralises its text first.
 */
import { neutraliseControls } from '../terminal-text.js';

type Write = NodeJS.WriteStream['write'];
const RAW = new WeakMap<NodeJS.WriteStream, Write>();

/** Makes every later string (or UTF-8 buffer) written to `stream` inert. Idempotent. */
export function guardOutput(stream: NodeJS.WriteStream): void {
  if (RAW.has(stream)) return;
  const raw = stream.write.bind(stream) as Write;
  RAW.set(stream, raw);
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    const text =
      typeof chunk === 'string'
        ? neutraliseControls(chunk)
        : chunk instanceof Uint8Array
          ? neutraliseControls(Buffer.from(chunk).toString('utf8'))
          : chunk;
    return (raw as (...args: unknown[]) => boolean)(text, ...rest);
  }) as Write;
}

/** Writes `text` as is: only for control sequences paysync itself composes (the progress bar). */
export function writeRaw(stream: NodeJS.WriteStream, text: string): boolean {
  return (RAW.get(stream) ?? stream.write.bind(stream))(text);
}
