/**
 * Organisations and API keys, deterministic from the seed. A key's secret is what clients send in
 * `X-API-Key`; records only ever carry the key's id (`api_key_id`), never the secret.
 */
import { hexOf, mix32, mulberry32 } from './prng.js';
import type { SimKeys } from './types.js';

/** `org`: all three lists and initialize. `byKey`: by-key list and initialize. `none`: nothing. */
export type KeyRights = 'org' | 'byKey' | 'none';

export interface ApiKey {
  secret: string;
  id: string;
  organizationId: string;
  rights: KeyRights;
}

export interface Directory {
  organisations: string[];
  keys: SimKeys;
  /** Per organisation: the key ids its generated payments were created with (first one most often). */
  creatorIds: Map<string, string[]>;
  bySecret: Map<string, ApiKey>;
}

export function buildDirectory(seed: number, orgCount: number, extraSecrets: readonly string[]): Directory {
  const rng = mulberry32(mix32(seed, 0x6b657973));
  const organisations = Array.from({ length: orgCount }, () => `org_${hexOf(rng, 12)}`);
  const bySecret = new Map<string, ApiKey>();
  const creatorIds = new Map<string, string[]>();
  const add = (organizationId: string, rights: KeyRights, secret = `sk_test_${hexOf(rng, 32)}`): ApiKey => {
    const key = { secret, id: `key_${hexOf(rng, 16)}`, organizationId, rights };
    bySecret.set(secret, key);
    return key;
  };
  const organisation: Record<string, string> = {};
  for (const org of organisations) {
    const orgKey = add(org, 'org');
    organisation[org] = orgKey.secret;
    // A key id no SimKeys secret maps to: payments made from the dashboard, seen only on the org list.
    creatorIds.set(org, [orgKey.id, `key_${hexOf(rng, 16)}`]);
  }
  const first = organisations[0] as string;
  const byKeyOnly = add(first, 'byKey');
  const forbidden = add(first, 'none');
  creatorIds.get(first)?.push(byKeyOnly.id);
  for (const secret of extraSecrets) add(first, 'org', secret);
  return {
    organisations,
    keys: { organisation, byKeyOnly: byKeyOnly.secret, forbidden: forbidden.secret },
    creatorIds,
    bySecret,
  };
}
