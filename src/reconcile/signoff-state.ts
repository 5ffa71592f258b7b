/**
 * A day's sign-off state, pure: from the day's latest pack version and its sign-offs (newest first, each
 * with its revocation if any). The one rule behind `paysync signoff --list`, `paysync status`, the status
 * page, the metric and the day's top manifest.
 *
 * - signed: the sign-off in force (the latest not revoked) is of the latest version, or of an earlier one
 *   holding the same records (equal digests: a new version whose records did not change, a state that
 *   moved, is not a restatement);
 * - restated after sign-off: the sign-off in force is of a version whose records differ from the latest's;
 *   it stays on the version it signed, and the day needs a new sign-off;
 * - revoked: sign-offs were recorded and all were revoked;
 * - needs sign-off: never signed, and the latest version is final;
 * - not final: never signed, and the latest version is not final (nothing to sign yet).
 */
import type { PackState, RecordsDigests, SignedVersion, SignoffState } from './manifest.js';
import { changedStreams } from './records-digest.js';

export interface LatestVersion {
  day: string;
  version: number;
  state: PackState;
  digests: RecordsDigests | null;
}

export interface SignoffRecord extends SignedVersion {
  id: number;
  digests: RecordsDigests | null;
  revoked: { by: string; at: string; note: string } | null;
}

export interface DaySignoff extends SignoffState {
  day: string;
  packState: PackState;
  /** A final version awaits a sign-off (what `signoff --list --pending` exits 1 on). */
  awaiting: boolean;
  /** The latest revocation, when no sign-off is in force. */
  revoked: (SignoffRecord['revoked'] & { version: number }) | null;
}

const signedText = (s: SignedVersion) => `v${s.version} signed off by ${s.by} at ${s.at}`;
const toSign = (day: string) => `paysync signoff --day ${day} --by NAME`;

export function signedOf(r: SignoffRecord): SignedVersion {
  return { version: r.version, by: r.by, at: r.at, note: r.note, manifestSha256: r.manifestSha256 };
}

/** Whether the signed version's records are the latest version's. */
export function sameRecords(signed: SignoffRecord, latest: LatestVersion): boolean {
  return signed.version === latest.version || changedStreams(signed.digests, latest.digests).length === 0;
}

export function signoffStateOf(latest: LatestVersion, newestFirst: readonly SignoffRecord[]): DaySignoff {
  const { day, version } = latest;
  const final = latest.state === 'final';
  const inForce = newestFirst.find((s) => !s.revoked) ?? null;
  const base = { day, version, packState: latest.state, signed: inForce && signedOf(inForce), revoked: null };
  const waiting = final ? `: ${toSign(day)}` : ` once it is final (v${version} is ${latest.state})`;
  if (inForce && sameRecords(inForce, latest)) {
    const same = inForce.version === version ? '' : `; v${version} holds the same records`;
    return { ...base, state: 'signed', awaiting: false, summary: `${signedText(inForce)}${same}` };
  }
  if (inForce) {
    return {
      ...base,
      state: 'restated after sign-off',
      awaiting: final,
      summary: `restated after sign-off: ${signedText(inForce)}; v${version} changed its records and needs a new sign-off${waiting}`,
    };
  }
  const last = newestFirst[0];
  if (last?.revoked) {
    const r = last.revoked;
    return {
      ...base,
      state: 'revoked',
      awaiting: final,
      revoked: { ...r, version: last.version },
      summary: `the sign-off of v${last.version} by ${last.by} was revoked by ${r.by} at ${r.at} (${r.note}); it needs a sign-off${waiting}`,
    };
  }
  if (final)
    return {
      ...base,
      state: 'needs sign-off',
      awaiting: true,
      summary: `v${version} is final and needs a sign-off: ${toSign(day)}`,
    };
  return {
    ...base,
    state: 'not final',
    awaiting: false,
    summary: `v${version} is ${latest.state}: a sign-off waits for a final version`,
  };
}

/** The part of a day's state the top manifest carries. */
export function manifestSignoff(s: DaySignoff): SignoffState {
  return { state: s.state, version: s.version, signed: s.signed, summary: s.summary };
}
