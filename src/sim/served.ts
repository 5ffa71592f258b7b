/**
 * How a record is served under the record switches: pure edits of its fields (a second listing that
 * contradicts the first, timestamp overrides, known fields dropped or retyped, the caller's key echoed)
 * and extra fields appended to its JSON text. Edits work on parsed fields and are applied only to the
 * records they touch, so the plain serving path stays string concatenation.
 */
import type { CopyClock, CopyVariant, FieldShape, KeyEcho, TimestampOverride } from './types.js';

export type Fields = Record<string, unknown>;

/** Another valid status: what a contradicting copy claims. */
function otherStatus(status: unknown): string {
  return status === 'COMPLETE' ? 'FAILED' : 'COMPLETE';
}

/** The amount with its integer part raised by one, exactly (decimal text, no float addition). */
export function raisedAmount(amount: unknown): unknown {
  if (typeof amount !== 'number') return amount;
  const text = String(amount);
  if (/[eE]/.test(text)) return amount + 1;
  const [whole, fraction] = text.split('.');
  const raised = (BigInt(whole as string) + 1n).toString();
  return Number(fraction === undefined ? raised : `${raised}.${fraction}`);
}

function shifted(iso: unknown, ms: number): unknown {
  return typeof iso === 'string' ? new Date(Date.parse(iso) + ms).toISOString() : iso;
}

/** A record's second listing: `variant` changed, `updatedAt` equal, a second later or a second earlier. */
export function contradictingCopy(f: Fields, variant: CopyVariant, clock: CopyClock): Fields {
  const copy = { ...f };
  if (variant === 'status') copy.status = otherStatus(f.status);
  if (variant === 'amount') copy.amount = raisedAmount(f.amount);
  if (clock !== 'same') copy.updatedAt = shifted(f.updatedAt, clock === 'later' ? 1000 : -1000);
  return copy;
}

export function withTimestamps(f: Fields, o: TimestampOverride): Fields {
  return { ...f, ...o };
}

function reshaped(value: unknown, to: FieldShape): unknown {
  if (to === 'null') return null;
  if (to === 'number') return 1;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Known fields dropped (`missing`) or retyped. */
export function withFieldChanges(f: Fields, changes: readonly { field: string; to: FieldShape }[]): Fields {
  const out = { ...f };
  for (const { field, to } of changes) {
    if (to === 'missing') delete out[field];
    else out[field] = reshaped(f[field], to);
  }
  return out;
}

/** The caller's key where a careless service would echo it. */
export function withEchoedKey(f: Fields, secret: string, places: readonly KeyEcho[]): Fields {
  const out = { ...f };
  if (places.includes('api_key_id')) out.api_key_id = secret;
  if (places.includes('description')) out.description = `${String(f.description)} (key ${secret})`;
  if (places.includes('extra_data')) {
    const extra = f.extra_data !== null && typeof f.extra_data === 'object' ? f.extra_data : {};
    out.extra_data = { ...extra, api_key: secret };
  }
  return out;
}

/** Appends `name: JSON text` pairs to a record's JSON object text, verbatim (numbers keep their digits). */
export function withExtraFields(json: string, extra: Readonly<Record<string, string>>): string {
  const names = Object.keys(extra);
  if (names.length === 0) return json;
  const added = names.map((name) => `${JSON.stringify(name)}:${extra[name] as string}`).join(',');
  return `${json.slice(0, json.lastIndexOf('}'))},${added}}`;
}
