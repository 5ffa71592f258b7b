/**
 * The demo's packs: the demo owns its EXPORT_DIR the way it owns its database (paysync_demo, emptied at
 * each run) and its Redis prefix. Its packs describe a database the next run drops, so each run starts
 * its EXPORT_DIR empty too: it removes the day folders a previous demo left there, and marks the folder
 * as the demo's (a file named DEMO_MARK). A folder that holds anything without that mark is another
 * warehouse's (or a person's): the demo refuses it (exit 2) rather than write its simulated days over
 * real packs, or restate a day of another dataset.
 */
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ConfigError } from '../errors.js';

export const DEMO_MARK = '.paysync-demo';
const DAY_FOLDER = /^\d{4}-\d{2}-\d{2}$/;

/** Makes `exportDir` the demo's, empty of earlier demo packs; refuses a folder the demo did not write. */
export async function prepareDemoExports(exportDir: string): Promise<string> {
  const root = resolve(exportDir);
  await mkdir(root, { recursive: true });
  const entries = await readdir(root);
  if (entries.length > 0 && !entries.includes(DEMO_MARK)) {
    throw new ConfigError(
      `EXPORT_DIR (${root}) holds files the demo did not write: the demo never writes over another warehouse's packs; ` +
        'run it in another folder, or set EXPORT_DIR to an empty one',
    );
  }
  for (const name of entries) {
    if (DAY_FOLDER.test(name)) await rm(join(root, name), { recursive: true, force: true });
  }
  await writeFile(
    join(root, DEMO_MARK),
    'Packs written by `paysync demo` from its paysync_demo database, which each run empties: each run empties this folder too.\n',
  );
  return root;
}
