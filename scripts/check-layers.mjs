#!/usr/bin/env node
/**
 * The layer check of the test gate (`npm run lint`): every import between the TypeScript sources runs one
 * way, down the layers declared in LAYERS below, and no files import each other in a cycle (STYLE.md;
 * bullmq runs the same cycle check in its gate). Every relative import counts, `import type` and
 * `export … from` included: a type-only import still ties the importer's design to the imported file.
 * Prints each offending import (file:line, what it imports, what its layer may import) and each cycle as
 * a chain of files. No dependencies: the imports are read with a regular expression over the source text
 * (comments blanked first).
 *   node scripts/check-layers.mjs [--root DIR]   (default: the current directory)
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/**
 * The layers, top to bottom, and what each may import (its own layer, other layers by name, or single
 * files). The core (sync, probe) declares its ports in its own terms; the adapters (warehouse, upstream)
 * implement them and the composition root wires them in, so the core never imports the warehouse. The
 * core reads the service through the upstream client and speaks its record types. A file under src/ or
 * jobs/ that no layer claims fails the check: each new room of the house is placed on purpose.
 */
export const LAYERS = [
  {
    name: 'cli',
    paths: ['src/cli/'],
    may: ['cli', 'jobs', 'root', 'ops', 'core', 'warehouse', 'upstream', 'config', 'ground', 'sim'],
  },
  {
    name: 'jobs',
    paths: ['jobs/'],
    may: ['jobs', 'root', 'ops', 'core', 'warehouse', 'upstream', 'config', 'ground'],
  },
  {
    name: 'root',
    paths: ['src/runtime.ts'],
    may: ['ops', 'core', 'warehouse', 'upstream', 'config', 'ground'],
  },
  {
    name: 'ops',
    paths: ['src/ops/', 'src/reconcile/'],
    may: ['ops', 'core', 'warehouse', 'upstream', 'config', 'ground'],
  },
  { name: 'core', paths: ['src/sync/', 'src/probe/'], may: ['core', 'upstream', 'config', 'ground'] },
  {
    name: 'warehouse',
    paths: ['src/warehouse/'],
    may: ['warehouse', 'core', 'upstream', 'config', 'ground'],
  },
  { name: 'upstream', paths: ['src/upstream/'], may: ['upstream', 'config', 'ground'] },
  { name: 'config', paths: ['src/config/'], may: ['config', 'ground'] },
  {
    name: 'ground',
    paths: [
      'src/errors.ts',
      'src/error-codes.ts',
      'src/log.ts',
      'src/pause-point.ts',
      'src/scrub.ts',
      'src/secret-runs.ts',
      'src/host-names.ts',
      'src/http-gate.ts',
      'src/terminal-text.ts',
      'src/telemetry/',
    ],
    may: ['ground'],
  },
  { name: 'sim', paths: ['src/sim/'], may: ['sim', 'ground', 'src/upstream/schemas.ts'] },
  // Benchmarks and tests exercise any layer.
  { name: 'bench', paths: ['bench/'], may: ['*'] },
  { name: 'test', paths: ['test/'], may: ['*'] },
];

const ROOTS = ['src', 'jobs', 'bench', 'test'];
const IMPORT =
  /(?:^|[;\s])(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|(?:^|[;\s])import\s*['"]([^'"]+)['"]/g;

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

/** Comments blanked to spaces, line breaks kept: a match's offset still gives its line. */
function code(text) {
  const blank = (m) => m.replace(/[^\n]/g, ' ');
  return text.replace(/\/\*[\s\S]*?\*\//g, blank).replace(/^\s*\/\/.*$/gm, blank);
}

/** Each file's relative imports: target file and line. */
function readImports(paths) {
  const graph = new Map();
  for (const file of paths) {
    const text = code(readFileSync(file, 'utf8'));
    const deps = [];
    for (const m of text.matchAll(IMPORT)) {
      const dep = target(file, m[1] ?? m[2] ?? m[3]);
      const at = m.index + m[0].search(/\S/); // the match may begin with the line break before it
      if (dep) deps.push({ file: dep, line: text.slice(0, at).split('\n').length });
    }
    graph.set(file, deps);
  }
  return graph;
}

function layerOf(path) {
  return LAYERS.find((l) => l.paths.some((p) => (p.endsWith('/') ? path.startsWith(p) : path === p)));
}

function allowed(from, to, toPath) {
  return from.may.includes('*') || from.may.includes(to?.name) || from.may.includes(toPath);
}

/** Imports against the table, and files no layer claims. */
function layerViolations(graph, root) {
  const rel = (f) => relative(root, f).split(sep).join('/');
  const problems = [];
  for (const [file, deps] of graph) {
    const from = layerOf(rel(file));
    if (!from) {
      problems.push(`${rel(file)} belongs to no layer: place it in LAYERS (scripts/check-layers.mjs)`);
      continue;
    }
    for (const dep of deps) {
      const to = layerOf(rel(dep.file));
      if (allowed(from, to, rel(dep.file))) continue;
      problems.push(
        `${rel(file)}:${dep.line} imports ${rel(dep.file)} (${to?.name ?? 'no layer'}): ` +
          `${from.name} may import only ${from.may.join(', ')}`,
      );
    }
  }
  return problems;
}

/** Tarjan's strongly connected components: every component of more than one file (or a self-import). */
function cycles(graph) {
  let index = 0;
  const stack = [];
  const info = new Map();
  const found = [];
  const connect = (v) => {
    info.set(v, { index, low: index, onStack: true });
    index++;
    stack.push(v);
    for (const { file: w } of graph.get(v) ?? []) {
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
      if (component.length > 1 || graph.get(v).some((d) => d.file === v)) found.push(component);
    }
  };
  for (const v of graph.keys()) if (!info.has(v)) connect(v);
  return found;
}

const args = process.argv.slice(2);
const root = resolve(args[0] === '--root' && args[1] ? args[1] : '.');
const graph = readImports(ROOTS.flatMap((dir) => files(join(root, dir))));
const problems = layerViolations(graph, root);
const loops = cycles(graph);
for (const p of problems) process.stderr.write(`layer: ${p}\n`);
for (const component of loops)
  process.stderr.write(
    `import cycle among: ${component
      .map((f) => relative(root, f))
      .sort()
      .join(' ↔ ')}\n`,
  );
if (problems.length)
  process.stderr.write(
    `${problems.length} import(s) against the layers: declare what the lower layer needs in its own terms ` +
      '(a port the root wires), or move what both need down a layer\n',
  );
if (loops.length)
  process.stderr.write(
    `${loops.length} import cycle(s): break each by moving what both sides need into a third file\n`,
  );
if (problems.length || loops.length) process.exit(1);
process.stdout.write(`imports follow the layers, no cycles, among ${graph.size} files\n`);
