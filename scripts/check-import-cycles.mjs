#!/usr/bin/env node
/**
 * Fails when the TypeScript sources import each other in a cycle (STYLE.md: no import cycles; bullmq runs
 * the same check in its gate). Every relative import counts, `import type` included: a type-only cycle
 * still ties two files' designs together. Prints each cycle as a chain of files. No dependencies: the
 * imports are read with a regular expression over the source text (comments stripped first).
 *   node scripts/check-import-cycles.mjs [dir…]   (default: src jobs bench test)
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const roots = process.argv.slice(2).length ? process.argv.slice(2) : ['src', 'jobs', 'bench', 'test'];
const IMPORT =
  /(?:^|[;\s])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)/g;

function files(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' || name === 'dist' ? [] : files(path);
    return /\.ts$/.test(name) && !name.endsWith('.d.ts') ? [resolve(path)] : [];
  });
}

function target(from, spec) {
  if (!spec.startsWith('.')) return null;
  const base = resolve(dirname(from), spec);
  for (const candidate of [base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')])
    if (existsSync(candidate)) return candidate;
  return null;
}

const graph = new Map();
for (const file of roots.flatMap(files)) {
  const text = readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  const deps = new Set();
  for (const m of text.matchAll(IMPORT)) {
    const dep = target(file, m[1] ?? m[2]);
    if (dep) deps.add(dep);
  }
  graph.set(file, deps);
}

// Tarjan's strongly connected components: every component of more than one file (or a self-import) is a cycle.
let index = 0;
const stack = [];
const info = new Map();
const cycles = [];
function connect(v) {
  info.set(v, { index, low: index, onStack: true });
  index++;
  stack.push(v);
  for (const w of graph.get(v) ?? []) {
    if (!graph.has(w)) continue;
    if (!info.has(w)) {
      connect(w);
      info.get(v).low = Math.min(info.get(v).low, info.get(w).low);
    } else if (info.get(w).onStack) info.get(v).low = Math.min(info.get(v).low, info.get(w).index);
  }
  if (info.get(v).low === info.get(v).index) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      info.get(w).onStack = false;
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || graph.get(v).has(v)) cycles.push(component);
  }
}
for (const v of graph.keys()) if (!info.has(v)) connect(v);

if (cycles.length) {
  for (const component of cycles)
    process.stderr.write(
      `import cycle among: ${component
        .map((f) => relative(process.cwd(), f))
        .sort()
        .join(' ↔ ')}\n`,
    );
  process.stderr.write(
    `${cycles.length} import cycle(s): break each by moving what both sides need into a third file\n`,
  );
  process.exit(1);
}
process.stdout.write(`no import cycles among ${graph.size} files\n`);
