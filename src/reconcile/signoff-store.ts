/**
 * Where sign-offs live: reporting.signoffs and reporting.signoff_revocations (sql/020, append-only: rows
 * are only ever inserted), read with the ledger of versions (reporting.export_versions) into each day's
 * sign-off state (signoff-state.ts).
 */
import type { Pool, PoolClient } from 'pg';
import type { PackState, RecordsDigests } from './manifest.js';
import { signoffStateOf, type DaySignoff, type LatestVersion, type SignoffRecord } from './signoff-state.js';

type Db = Pool | PoolClient;

/** Which days: an inclusive range (either end open), or only days that have sign-offs. */
export interface DayRange {
  from?: string | null;
  to?: string | null;
  signedOnly?: boolean;
}

const rangeOn = (column: string) =>
  `($1::date IS NULL OR ${column} >= $1::date) AND ($2::date IS NULL OR ${column} <= $2::date)`;

const LATEST_SQL = `
  SELECT DISTINCT ON (day) day::text AS day, version, state, manifest->'digests' AS digests
    FROM reporting.export_versions
   WHERE ${rangeOn('day')} AND (NOT $3 OR day IN (SELECT day FROM reporting.signoffs))
   ORDER BY day, version DESC`;

const SIGNOFFS_SQL = `
  SELECT s.signoff_id AS id, s.day::text AS day, s.version, s.signed_by, s.signed_at, s.note,
         s.manifest_sha256, s.payments_digest, s.transfers_digest,
         r.revoked_by, r.revoked_at, r.note AS revoke_note
    FROM reporting.signoffs s LEFT JOIN reporting.signoff_revocations r USING (signoff_id)
   WHERE ${rangeOn('s.day')}
   ORDER BY s.day, s.signoff_id DESC`;

interface SignoffRow {
  id: string;
  day: string;
  version: number;
  signed_by: string;
  signed_at: Date;
  note: string | null;
  manifest_sha256: string;
  payments_digest: string | null;
  transfers_digest: string | null;
  revoked_by: string | null;
  revoked_at: Date | null;
  revoke_note: string | null;
}

function recordOf(r: SignoffRow): SignoffRecord & { day: string } {
  const digests =
    r.payments_digest && r.transfers_digest
      ? { payments: r.payments_digest, transfers: r.transfers_digest }
      : null;
  return {
    id: Number(r.id),
    day: r.day,
    version: r.version,
    by: r.signed_by,
    at: r.signed_at.toISOString(),
    note: r.note,
    manifestSha256: r.manifest_sha256,
    digests,
    revoked:
      r.revoked_by && r.revoked_at
        ? { by: r.revoked_by, at: r.revoked_at.toISOString(), note: r.revoke_note ?? '' }
        : null,
  };
}

/** The sign-off state of every day with a published pack in the range, oldest first. */
export async function signoffStates(db: Db, range: DayRange = {}): Promise<DaySignoff[]> {
  const params = [range.from ?? null, range.to ?? null];
  const latest = await db.query<{
    day: string;
    version: number;
    state: PackState;
    digests: RecordsDigests | null;
  }>(LATEST_SQL, [...params, range.signedOnly === true]);
  const { rows } = await db.query<SignoffRow>(SIGNOFFS_SQL, params);
  const byDay = new Map<string, SignoffRecord[]>();
  for (const r of rows) byDay.set(r.day, [...(byDay.get(r.day) ?? []), recordOf(r)]);
  return latest.rows.map((v: LatestVersion) => signoffStateOf(v, byDay.get(v.day) ?? []));
}

/** One day's state, or null when it has no pack. */
export async function signoffStateOfDay(db: Db, day: string): Promise<DaySignoff | null> {
  return (await signoffStates(db, { from: day, to: day }))[0] ?? null;
}

/** The day's sign-offs, newest first (revoked ones included). */
export async function signoffsOfDay(db: Db, day: string): Promise<SignoffRecord[]> {
  const { rows } = await db.query<SignoffRow>(SIGNOFFS_SQL, [day, day]);
  return rows.map(recordOf);
}

/** The latest version's ledger row: its manifest's SHA-256 as published (null before sql/020). */
export async function ledgerVersion(
  db: Db,
  day: string,
  version: number,
): Promise<{ manifestSha256: string | null; digests: RecordsDigests | null } | null> {
  const { rows } = await db.query<{ manifest_sha256: string | null; digests: RecordsDigests | null }>(
    `SELECT manifest_sha256, manifest->'digests' AS digests FROM reporting.export_versions
      WHERE day = $1::date AND version = $2`,
    [day, version],
  );
  const r = rows[0];
  return r ? { manifestSha256: r.manifest_sha256, digests: r.digests } : null;
}

export interface NewSignoff {
  day: string;
  version: number;
  by: string;
  note: string | null;
  manifestSha256: string;
  digests: RecordsDigests | null;
}

export async function insertSignoff(db: Db, s: NewSignoff): Promise<{ id: number; at: Date }> {
  const { rows } = await db.query<{ signoff_id: string; signed_at: Date }>(
    `INSERT INTO reporting.signoffs (day, version, signed_by, note, manifest_sha256, payments_digest, transfers_digest)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING signoff_id, signed_at`,
    [
      s.day,
      s.version,
      s.by,
      s.note,
      s.manifestSha256,
      s.digests?.payments ?? null,
      s.digests?.transfers ?? null,
    ],
  );
  return { id: Number(rows[0]!.signoff_id), at: rows[0]!.signed_at };
}

export async function insertRevocation(
  db: Db,
  signoffId: number,
  by: string,
  note: string,
): Promise<{ at: Date }> {
  const { rows } = await db.query<{ revoked_at: Date }>(
    `INSERT INTO reporting.signoff_revocations (signoff_id, revoked_by, note) VALUES ($1, $2, $3) RETURNING revoked_at`,
    [signoffId, by, note],
  );
  return { at: rows[0]!.revoked_at };
}
