/**
 * Is a published version on disk as paysync published it? Its own manifest against the SHA-256 the ledger
 * recorded when it was published (reporting.export_versions.manifest_sha256), each file it lists against
 * its size and SHA-256, no file it does not list, and the day's top manifest (when given) agreeing with
 * it on what the version holds. Returns one line per problem, each naming the file; empty: all agree.
 * Used by export (before it compares anything with the published version) and by verify.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Pool, PoolClient } from 'pg';
import { versionDir, type Manifest } from './manifest.js';
import { hashPackFile, type ReadManifest } from './pack-disk.js';
import { ledgerVersion } from './signoff-store.js';

type Db = Pool | PoolClient;

async function ledgerProblem(db: Db, own: ReadManifest): Promise<string[]> {
  const ledger = await ledgerVersion(db, own.manifest.day, own.manifest.version);
  if (!ledger?.manifestSha256 || ledger.manifestSha256 === own.sha256) return [];
  return [
    `${own.path}: not the manifest this warehouse published as ${versionDir(own.manifest.version)} ` +
      `(SHA-256 ${own.sha256}; published ${ledger.manifestSha256})`,
  ];
}

async function fileProblems(dir: string, manifest: Manifest): Promise<string[]> {
  const out: string[] = [];
  const listed = new Set(['manifest.json']);
  for (const entry of Object.values(manifest.files)) {
    if (!entry) continue;
    listed.add(entry.path);
    const path = join(dir, entry.path);
    const found = await hashPackFile(path);
    if (!found) out.push(`${path}: missing`);
    else if (found.sha256 !== entry.sha256 || found.bytes !== entry.bytes) {
      out.push(
        `${path}: changed (SHA-256 ${found.sha256}, ${found.bytes} bytes; its manifest says ${entry.sha256}, ${entry.bytes} bytes)`,
      );
    }
  }
  for (const name of (await readdir(dir)).sort()) {
    if (!listed.has(name)) out.push(`${join(dir, name)}: not listed in its manifest`);
  }
  return out;
}

/** Where the day's top manifest says something else than the version's own about what the version holds. */
export function topProblems(dayDir: string, top: Manifest, own: Manifest): string[] {
  const path = join(dayDir, 'manifest.json');
  const out: string[] = [];
  for (const [name, entry] of Object.entries(own.files)) {
    const said = (top.files as Record<string, { sha256?: string } | undefined>)[name];
    if (entry && said?.sha256 !== entry.sha256)
      out.push(
        `${path}: says ${name} has SHA-256 ${said?.sha256 ?? '(none)'}, ${versionDir(own.version)}/manifest.json says ${entry.sha256}`,
      );
  }
  if (top.state !== own.state)
    out.push(`${path}: says ${top.state}, ${versionDir(own.version)}/manifest.json says ${own.state}`);
  if (JSON.stringify(top.digests ?? null) !== JSON.stringify(own.digests ?? null))
    out.push(`${path}: its records digests differ from ${versionDir(own.version)}/manifest.json's`);
  return out;
}

export async function checkVersionOnDisk(
  db: Db,
  dayDir: string,
  own: ReadManifest,
  top?: Manifest,
): Promise<string[]> {
  const dir = join(dayDir, versionDir(own.manifest.version));
  return [
    ...(await ledgerProblem(db, own)),
    ...(await fileProblems(dir, own.manifest)),
    ...(top ? topProblems(dayDir, top, own.manifest) : []),
  ];
}
