/**
 * The demo's EXPORT_DIR (src/cli/demo-exports.ts), on real folders: a second demo run on a later day
 * starts from an empty folder (the previous run's packs describe a database it dropped), and a folder
 * holding packs the demo did not write is refused (exit 2 through the CLI) with nothing removed.
 * (The demo itself runs in test/cli/demo.test.ts.)
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../src/errors.js';
import { DEMO_MARK, prepareDemoExports } from '../../src/cli/demo-exports.js';

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("the demo's EXPORT_DIR", () => {
  it('is created and marked; a later run removes the earlier run’s day folders', async () => {
    dir = await mkdtemp(join(tmpdir(), 'paysync-demo-exports-'));
    const exports = join(dir, 'exports');
    await prepareDemoExports(exports);
    expect(await readdir(exports)).toEqual([DEMO_MARK]);
    await mkdir(join(exports, '2026-11-20', 'v1'), { recursive: true });
    await writeFile(join(exports, '2026-11-20', 'manifest.json'), '{}');
    await prepareDemoExports(exports);
    expect(await readdir(exports)).toEqual([DEMO_MARK]);
  });

  it("refuses a folder holding another warehouse's packs, and removes nothing", async () => {
    dir = await mkdtemp(join(tmpdir(), 'paysync-demo-exports-'));
    await mkdir(join(dir, '2026-11-20', 'v1'), { recursive: true });
    await expect(prepareDemoExports(dir)).rejects.toThrow(ConfigError);
    await expect(prepareDemoExports(dir)).rejects.toThrow(/holds files the demo did not write/);
    expect(await readdir(dir)).toEqual(['2026-11-20']);
  });
});
