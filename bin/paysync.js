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
await import(main.href);
