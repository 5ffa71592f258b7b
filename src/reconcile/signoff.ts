/**
 * Finance's sign-off of a day: `paysync signoff` records that NAME signed off the day's latest pack
 * version, or revokes a mistaken sign-off; each is a new row (signoff-store.ts: nothing is ever updated
 * or deleted), and the day's top manifest is rewritten with the sign-off state now (the version's own
 * files never change). Runs under the day's pack lock, so it never interleaves with an export.
 *
 * A sign-off is refused (SignoffRefusedError, exit 1) for a day with no pack, a latest version that is
 * not final, a pack on disk that no longer matches what was published, or a warehouse whose records of
 * the day changed since the version was written (sign the restated version instead).
 */
import type { PoolClient } from 'pg';
import { join } from 'node:path';
import { PaysyncError } from '../errors.js';
import type { Runtime } from '../sync/services.js';
import { dayWindow } from '../sync/windows.js';
import { readPublished } from './export-day.js';
import { manifestText, replaceFileAtomically, type SignedVersion } from './manifest.js';
import { dayFolder, readLatestManifest } from './pack-disk.js';
import { withDayLock } from './pack-lock.js';
import { changedStreams, recordsDigests } from './records-digest.js';
import { manifestSignoff, signedOf, type DaySignoff } from './signoff-state.js';
import {
  insertRevocation,
  insertSignoff,
  ledgerVersion,
  signoffsOfDay,
  signoffStateOfDay,
} from './signoff-store.js';

/** What cannot be signed off (or revoked), said in one line. Exit 1. */
export class SignoffRefusedError extends PaysyncError {
  constructor(message: string) {
    super('SIGNOFF_REFUSED', message);
  }
}

export interface SignoffResult {
  day: string;
  version: number;
  manifestSha256: string;
  /** The sign-off already in force on this version (nothing recorded), or null. */
  already: SignedVersion | null;
  at: Date | null;
}

async function dayDirOf(runtime: Runtime, day: string): Promise<string> {
  const dir = await dayFolder(runtime.settings.EXPORT_DIR, day, false);
  if (!dir) throw new SignoffRefusedError(`${day} has no pack: run \`paysync export --day ${day}\` first`);
  return dir;
}

/** The warehouse's records digests of the day now, in a snapshot of their own. */
async function currentDigests(runtime: Runtime, client: PoolClient, day: string) {
  const w = dayWindow(day, runtime.settings.REPORT_TIMEZONE);
  await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
  try {
    return await recordsDigests(client, [w.start, w.end]);
  } finally {
    await client.query('COMMIT');
  }
}

/** Rewrites the day's top manifest with the sign-off state now (nothing else changes). */
async function rewriteTop(client: PoolClient, dayDir: string, day: string): Promise<DaySignoff | null> {
  const top = await readLatestManifest(dayDir);
  const state = await signoffStateOfDay(client, day);
  if (top && state) {
    const text = manifestText({ ...top.manifest, signoff: manifestSignoff(state) });
    await replaceFileAtomically(join(dayDir, 'manifest.json'), text);
  }
  return state;
}

export async function signOff(
  runtime: Runtime,
  request: { day: string; by: string; note: string | null },
): Promise<SignoffResult> {
  const { day } = request;
  const dayDir = await dayDirOf(runtime, day);
  return withDayLock(runtime.pool, day, async (client) => {
    const published = await readPublished(client, day, dayDir);
    if (!published)
      throw new SignoffRefusedError(`${day} has no pack: run \`paysync export --day ${day}\` first`);
    const { own, ownSha256 } = published;
    const v = `v${own.version}`;
    if (own.state !== 'final') {
      throw new SignoffRefusedError(
        `the latest pack of ${day} (${v}) is ${own.state}, and only a final pack can be signed off (${own.stateReason})`,
      );
    }
    if (!(await ledgerVersion(client, day, own.version))) {
      throw new SignoffRefusedError(
        `${v} of ${day} is not in this warehouse's ledger: another warehouse published it (or the database was reset); export the day again`,
      );
    }
    const now = await currentDigests(runtime, client, day);
    const moved = own.digests ? changedStreams(own.digests, now) : [];
    if (moved.length > 0) {
      throw new SignoffRefusedError(
        `the warehouse's ${moved.join(' and ')} records of ${day} changed since ${v} was written: ` +
          `run \`paysync export --day ${day}\`, then sign off the new version`,
      );
    }
    const state = await signoffStateOfDay(client, day);
    if (state?.state === 'signed' && state.signed?.version === own.version)
      return { day, version: own.version, manifestSha256: ownSha256, already: state.signed, at: null };
    const row = await insertSignoff(client, {
      day,
      version: own.version,
      by: request.by,
      note: request.note,
      manifestSha256: ownSha256,
      digests: own.digests ?? null,
    });
    await rewriteTop(client, dayDir, day);
    return { day, version: own.version, manifestSha256: ownSha256, already: null, at: row.at };
  });
}

export interface RevokeResult {
  day: string;
  revoked: SignedVersion;
  state: DaySignoff | null;
}

export async function revokeSignoff(
  runtime: Runtime,
  request: { day: string; by: string; note: string },
): Promise<RevokeResult> {
  const { day } = request;
  const dayDir = await dayFolder(runtime.settings.EXPORT_DIR, day, false);
  return withDayLock(runtime.pool, day, async (client) => {
    const inForce = (await signoffsOfDay(client, day)).find((s) => !s.revoked);
    if (!inForce)
      throw new SignoffRefusedError(
        `${day} has no sign-off in force to revoke (see \`paysync signoff --list\`)`,
      );
    if (dayDir) await readLatestManifest(dayDir); // a top manifest that is not paysync's stops here, nothing recorded
    await insertRevocation(client, inForce.id, request.by, request.note);
    const state = dayDir ? await rewriteTop(client, dayDir, day) : await signoffStateOfDay(client, day);
    return { day, revoked: signedOf(inForce), state };
  });
}
