/**
 * The shape of a manifest paysync writes, checked whenever one is read back (zod): a file that does not
 * parse, or that is not a paysync manifest (another tool's manifest.json, a hand-edited one, a version
 * number no pack can have, a file path leading out of the version folder), is refused with one line
 * naming the file and what is wrong. Fields paysync does not read are kept as they are (loose objects),
 * so a manifest written by another version of paysync still reads.
 */
import { z } from 'zod';
import { PaysyncError } from '../errors.js';
import { MAX_VERSION, type Manifest } from './manifest.js';

/** Top: the day's manifest.json (paths like `v2/payments.csv`); version: `vN/manifest.json`. */
export type ManifestKind = 'top' | 'version';

/** A manifest that does not parse or is not paysync's. Exit 1. */
export class ManifestError extends PaysyncError {
  constructor(path: string, why: string) {
    super(
      'PACK_MANIFEST_INVALID',
      `${path} ${why}: paysync reads only the manifests it writes; restore it (or move the day folder out of EXPORT_DIR to publish the day afresh)`,
    );
  }
}

const sha256 = z.string().regex(/^[0-9a-f]{64}$/, 'not a SHA-256');
const count = z.number().int().min(0);
/** A file name inside the version folder: no folder part, no leading dot. */
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

function fileEntry(kind: ManifestKind) {
  const path = kind === 'top' ? /^v\d+\/[A-Za-z0-9][A-Za-z0-9._-]*$/ : NAME;
  return z.looseObject({
    path: z.string().regex(path, 'a file path outside the version folder'),
    rows: count,
    bytes: count,
    sha256,
  });
}

function schemaOf(kind: ManifestKind) {
  const file = fileEntry(kind);
  const total = z.looseObject({ records: count, amount: z.string() });
  return z.looseObject({
    day: z.string().regex(/^\d{4}-\d{2}-\d{2}$/),
    timeZone: z.string().min(1),
    version: z.number().int().min(1).max(MAX_VERSION),
    generatedAt: z.string(),
    state: z.enum(['final', 'provisional', 'incomplete']),
    stateReason: z.string(),
    files: z.looseObject({
      payments: file,
      transfers: file,
      summary: file,
      rejects: file,
      differences: file.optional(),
      xlsx: file.optional(),
    }),
    totals: z.looseObject({ payments: total, transfers: total }),
    quarantined: z.looseObject({ payments: count, transfers: count }),
    reconcile: z.unknown(),
    restatement: z.unknown(),
    digests: z.looseObject({ payments: sha256, transfers: sha256 }).optional(),
  });
}

const SCHEMAS = { top: schemaOf('top'), version: schemaOf('version') };

/** Parses `text` read from `path` as a manifest of `kind`, or throws ManifestError naming the file. */
export function parseManifest(text: string, path: string, kind: ManifestKind): Manifest {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ManifestError(path, `does not parse as JSON (${(error as Error).message})`);
  }
  const result = SCHEMAS[kind].safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue && issue.path.length > 0 ? issue.path.join('.') : '(the whole file)';
    throw new ManifestError(path, `is not a paysync manifest (${where}: ${issue?.message ?? 'invalid'})`);
  }
  const manifest = result.data as unknown as Manifest;
  if (kind === 'top') {
    const prefix = `v${manifest.version}/`;
    const stray = Object.values(manifest.files).find((f) => f && !f.path.startsWith(prefix));
    if (stray) throw new ManifestError(path, `names ${stray.path}, outside its version's folder ${prefix}`);
  }
  return manifest;
}
