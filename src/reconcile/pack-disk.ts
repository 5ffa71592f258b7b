/**
 * The pack's files as paysync reads them back, trusting nothing on disk:
 * - a day folder is a real folder directly inside EXPORT_DIR: a symbolic link (or anything else) there is
 *   refused, so no export writes, and no verify reads, outside EXPORT_DIR;
 * - every file is opened with O_NOFOLLOW (a link at the last component fails instead of being followed);
 * - a manifest is parsed and checked against the shape paysync writes (manifest-schema.ts), and any
 *   failure is one line naming the file.
 * EXPORT_DIR itself may be a link: where it points is the operator's choice (docs/operations.md says who
 * may write there).
 */
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { lstat, mkdir, open, readdir, realpath } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { PaysyncError } from '../errors.js';
import { parseManifest, type ManifestKind } from './manifest-schema.js';
import { MAX_VERSION, versionDir, type Manifest } from './manifest.js';

/** The pack on disk is not what paysync published, or not where it may be. Exit 1. */
export class PackDiskError extends PaysyncError {
  constructor(message: string) {
    super('PACK_ON_DISK', message);
  }
}

const errno = (error: unknown) => (error as { code?: string }).code;

/**
 * `EXPORT_DIR/day` as a real folder inside EXPORT_DIR, created when `create` and missing. Returns null
 * when it does not exist and is not to be created.
 */
export async function dayFolder(exportDir: string, day: string, create: boolean): Promise<string | null> {
  const root = resolve(exportDir);
  if (create) await mkdir(root, { recursive: true });
  const dir = join(root, day);
  const found = await lstat(dir).catch((error: unknown) => {
    if (errno(error) === 'ENOENT') return null;
    throw error;
  });
  if (!found) {
    if (!create) return null;
    await mkdir(dir).catch((error: unknown) => {
      if (errno(error) !== 'EEXIST') throw error;
    });
    return dayFolder(exportDir, day, false);
  }
  if (found.isSymbolicLink()) {
    throw new PackDiskError(
      `${dir} is a symbolic link: packs are written and read only inside EXPORT_DIR (${root}), never through a link; remove the link`,
    );
  }
  if (!found.isDirectory()) throw new PackDiskError(`${dir} is not a folder: move it out of EXPORT_DIR`);
  if ((await realpath(dir)) !== join(await realpath(root), day)) {
    throw new PackDiskError(`${dir} resolves outside EXPORT_DIR (${root}): remove what redirects it`);
  }
  return dir;
}

/** Opens a file of a pack for reading without following a link; a clear error when it is one. */
async function openNoFollow(path: string) {
  try {
    return await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    if (errno(error) === 'ELOOP')
      throw new PackDiskError(`${path} is a symbolic link: a pack holds files only`);
    throw error;
  }
}

/** openNoFollow, or null when the file does not exist. */
async function openIfPresent(path: string) {
  try {
    return await openNoFollow(path);
  } catch (error) {
    if (errno(error) === 'ENOENT') return null;
    throw error;
  }
}

/** The file's bytes, or null when it does not exist. */
export async function readPackFile(path: string): Promise<Buffer | null> {
  const handle = await openIfPresent(path);
  if (!handle) return null;
  try {
    return await handle.readFile();
  } finally {
    await handle.close();
  }
}

/** SHA-256 and size of a file, streamed; null when it does not exist. */
export async function hashPackFile(path: string): Promise<{ sha256: string; bytes: number } | null> {
  const handle = await openIfPresent(path);
  if (!handle) return null;
  const hash = createHash('sha256');
  let bytes = 0;
  try {
    for await (const chunk of handle.createReadStream({ autoClose: false }) as AsyncIterable<Buffer>) {
      hash.update(chunk);
      bytes += chunk.length;
    }
  } finally {
    await handle.close();
  }
  return { sha256: hash.digest('hex'), bytes };
}

export interface ReadManifest {
  manifest: Manifest;
  /** SHA-256 of the file as read. */
  sha256: string;
  path: string;
}

/** Reads and checks a manifest; null when the file does not exist. Anything else wrong: one line naming it. */
export async function readManifestFile(path: string, kind: ManifestKind): Promise<ReadManifest | null> {
  const bytes = await readPackFile(path);
  if (!bytes) return null;
  return {
    manifest: parseManifest(bytes.toString('utf8'), path, kind),
    sha256: createHash('sha256').update(bytes).digest('hex'),
    path,
  };
}

/** The day's top manifest (the latest version), or null when the day has never been exported. */
export function readLatestManifest(dayDir: string): Promise<ReadManifest | null> {
  return readManifestFile(join(dayDir, 'manifest.json'), 'top');
}

/** A version's own manifest; its folder must be a real folder. Null when the version is not on disk. */
export async function readVersionManifest(dayDir: string, version: number): Promise<ReadManifest | null> {
  const dir = join(dayDir, versionDir(version));
  const found = await lstat(dir).catch(() => null);
  if (!found) return null;
  if (!found.isDirectory() || found.isSymbolicLink())
    throw new PackDiskError(`${dir} is not a folder (a link or a file): a version is a folder of files`);
  const read = await readManifestFile(join(dir, 'manifest.json'), 'version');
  if (read && read.manifest.version !== version) {
    throw new PackDiskError(
      `${read.path} says version ${read.manifest.version}, but it is in ${versionDir(version)}/: it is not this version's manifest`,
    );
  }
  return read;
}

/** Version folders on disk: only names paysync writes (`v` and a number from 1 to MAX_VERSION). */
export async function versionsOnDisk(dayDir: string): Promise<number[]> {
  return (await readdir(dayDir))
    .flatMap((name) => {
      const n = /^v[1-9]\d{0,9}$/.test(name) ? Number(name.slice(1)) : 0;
      return n >= 1 && n <= MAX_VERSION ? [n] : [];
    })
    .sort((a, b) => a - b);
}
