#!/usr/bin/env node
// The CLI runs from the compiled output (built by `npm run build`, which `npm ci` runs through `prepare`):
// node on compiled JavaScript starts in about half the time of a TypeScript loader (see README).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(main))) {
  process.stderr.write(
    'paysync: not built yet; run `npm run build` (npm ci does it for you) and try again\n',
  );
  process.exit(2);
}
// Tracing (OpenTelemetry) only when an OTEL_* variable is set: its preload must run before any other
// import (under ESM, pg and http are instrumented only if they load after it); without one, no tracing
// code is loaded at all.
if (Object.keys(process.env).some((name) => name.startsWith('OTEL_'))) {
  await import(new URL('../dist/src/telemetry/preload.js', import.meta.url).href);
}
await import(main.href);
