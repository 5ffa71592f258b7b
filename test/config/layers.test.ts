/**
 * The layer check of the test gate (scripts/check-layers.mjs) on small source trees made for it: it
 * passes a tree whose imports run down the layers, and fails, naming each offending import by file and
 * line, on an import up the layers (type-only included), a file no layer claims, and an import cycle.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { run } from '../helpers/processes.js';

const CHECK = resolve('scripts/check-layers.mjs');
const made: string[] = [];

/** A source tree of these files (path → text) in a fresh directory. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'paysync-layers-'));
  made.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

const check = (root: string) => run(process.execPath, [CHECK, '--root', root]);

/** A tree that follows the layers: root → core ← warehouse → ground, a test importing anything. */
const GOOD = {
  'src/errors.ts': 'export class PaysyncError extends Error {}\n',
  'src/sync/ports.ts':
    "import type { PaysyncError } from '../errors.js';\nexport interface Port { e: PaysyncError }\n",
  'src/warehouse/adapter.ts':
    "import type { Port } from '../sync/ports.js';\nexport const adapter = {} as Port;\n",
  'src/runtime.ts': "import { adapter } from './warehouse/adapter.js';\nexport const wired = adapter;\n",
  'test/sync/any.test.ts': "import { wired } from '../../src/runtime.js';\nexport { wired };\n",
};

afterAll(() => {
  for (const root of made) rmSync(root, { recursive: true, force: true });
});

describe('the layer check', () => {
  it('passes a tree whose imports run down the layers', async () => {
    const ran = await check(tree(GOOD));
    expect(ran.stderr).toBe('');
    expect(ran.code).toBe(0);
  });

  it('fails on a type-only import from the core up to an adapter, naming file, line and target', async () => {
    const ran = await check(
      tree({
        ...GOOD,
        'src/warehouse/loader.ts': 'export interface LoadResult { rows: number }\n',
        'src/sync/ports.ts':
          "/** The port. */\nimport type { LoadResult } from '../warehouse/loader.js';\nexport interface Port { load(): LoadResult }\n",
      }),
    );
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(
      'layer: src/sync/ports.ts:2 imports src/warehouse/loader.ts (warehouse): core may import only',
    );
  });

  it('fails on the ground floor leaning on a higher floor, and on a file no layer claims', async () => {
    const ran = await check(
      tree({
        ...GOOD,
        'src/config/secret.ts': 'export const registered = new Set<string>();\n',
        'src/errors.ts':
          "import { registered } from './config/secret.js';\nexport const n = registered.size;\n",
        'src/stray.ts': 'export const stray = 1;\n',
      }),
    );
    expect(ran.code).toBe(1);
    expect(ran.stderr).toContain(
      'layer: src/errors.ts:1 imports src/config/secret.ts (config): ground may import only ground',
    );
    expect(ran.stderr).toContain('layer: src/stray.ts belongs to no layer');
  });

  it('does not count an import inside a comment', async () => {
    const ran = await check(
      tree({
        ...GOOD,
        'src/errors.ts': "/*\nimport { x } from './config/secret.js';\n*/\nexport const y = 1;\n",
      }),
    );
    expect(ran.code).toBe(0);
  });

  it('fails on an import cycle inside one layer', async () => {
    const ran = await check(
      tree({
        ...GOOD,
        'src/sync/a.ts': "import { b } from './b.js';\nexport const a = () => b;\n",
        'src/sync/b.ts': "import { a } from './a.js';\nexport const b = () => a;\n",
      }),
    );
    expect(ran.code).toBe(1);
    expect(ran.stderr).toMatch(/import cycle among: src\/sync\/a\.ts ↔ src\/sync\/b\.ts/);
  });
});
