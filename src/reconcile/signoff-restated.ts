/**
 * Decertification, as a new version records it: when the day has a sign-off in force whose records
 * differ from the version being published (its digests), the new version's manifest says which version
 * was signed, by whom and when, and what changed since (read from the signed version's files, which never
 * change; checked against their manifest first). The sign-off stays on the version it signed.
 */
import { join } from 'node:path';
import type { PoolClient } from 'pg';
import { versionDir, type RecordsDigests, type RestatedAfterSignoff } from './manifest.js';
import { checkVersionOnDisk } from './pack-check.js';
import { readVersionManifest } from './pack-disk.js';
import { changesBetweenFiles, classifyChanges } from './restatement.js';
import { changedStreams } from './records-digest.js';
import { signedOf } from './signoff-state.js';
import { signoffsOfDay } from './signoff-store.js';

export async function restatedAfterSignoff(
  client: PoolClient,
  day: string,
  dayDir: string,
  digests: RecordsDigests,
  newDir: string,
): Promise<RestatedAfterSignoff | null> {
  const inForce = (await signoffsOfDay(client, day)).find((s) => !s.revoked);
  if (!inForce || changedStreams(inForce.digests, digests).length === 0) return null;
  const signed = signedOf(inForce);
  const streams = changedStreams(inForce.digests, digests).join(' and ');
  const note =
    `v${signed.version} was signed off by ${signed.by} at ${signed.at}; this version changes the ${streams} records ` +
    "and needs a sign-off of its own (the day's top manifest.json and `paysync signoff --list` say whether it has one)";
  const own = await readVersionManifest(dayDir, signed.version).catch(() => null);
  const problems = own ? await checkVersionOnDisk(client, dayDir, own) : ['missing'];
  if (!own || problems.length > 0 || own.sha256 !== signed.manifestSha256) {
    const why = `the files of v${signed.version} are no longer as signed (\`paysync verify --day ${day} --all-versions\` names them)`;
    return { signed, changes: null, note: `${note}; what changed is not listed: ${why}` };
  }
  const rows = await changesBetweenFiles(join(dayDir, versionDir(signed.version)), own.manifest, newDir);
  return { signed, changes: classifyChanges(rows, signed.version), note };
}
