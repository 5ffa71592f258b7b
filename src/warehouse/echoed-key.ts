/**
 * The API key echoed in what the service sends. A careless or hostile service can put the caller's key
 * in a record (as `api_key_id`, inside a description, inside `extra_data`, in a field paysync does not
 * know); stored as sent, it would reach the warehouse, the packs and every analyst. Before a page is
 * written, every text and JSON value of every row is looked through for any form of a key this process
 * holds, or any run of 8 or more of its characters (src/scrub.ts); each one found is replaced by
 * SECRET_MARKER, the record lands so scrubbed, and it is noted in the rejects with ECHOED_KEY_REASON
 * (its raw copy scrubbed the same way, as every reject's is: page-prep.ts). A record whose id holds the
 * key cannot be stored under a scrubbed id (two such ids would collide) and is only quarantined.
 *
 * JSON values are scrubbed structurally (each string, key and number), so the stored JSON stays valid and
 * everything else in it stays as sent; a run of the key that spans the JSON's own punctuation leaves the
 * whole value as the marker.
 */
import { anyContainsSecret, containsSecret, replaceSecrets, SECRET_MARKER } from '../scrub.js';
import { isLosslessNumber, parseExactJson } from '../upstream/exact-json.js';
import { writeJson } from '../upstream/json-writer.js';
import type { Row, StreamTable } from './stream-tables.js';

export const ECHOED_KEY_REASON = 'the service echoed the API key';

function scalarWithoutSecrets(value: unknown): unknown {
  if (typeof value === 'string') return containsSecret(value) ? replaceSecrets(value) : value;
  if (typeof value === 'number' || isLosslessNumber(value))
    return containsSecret(String(value)) ? SECRET_MARKER : value;
  return value;
}

const isContainer = (v: unknown): v is object => v !== null && typeof v === 'object' && !isLosslessNumber(v);

function setField(target: object, key: string, value: unknown): void {
  // defineProperty: a key named __proto__ is data, never the object's prototype
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A copy of a parsed JSON value with every form and run of a registered key replaced. Iterative. */
export function withoutSecrets(value: unknown): unknown {
  if (!isContainer(value)) return scalarWithoutSecrets(value);
  const empty = (c: object): object => (Array.isArray(c) ? [] : {});
  const root = empty(value);
  const work: Array<[object, object]> = [[value, root]];
  while (work.length > 0) {
    const [from, to] = work.pop() as [object, object];
    const entries: Array<[string, unknown]> = Array.isArray(from)
      ? from.map((v, i) => [String(i), v])
      : Object.keys(from).map((k) => [k, (from as Record<string, unknown>)[k]]);
    for (const [key, item] of entries) {
      const name = Array.isArray(from) || !containsSecret(key) ? key : replaceSecrets(key);
      if (isContainer(item)) {
        const copy = empty(item);
        setField(to, name, copy);
        work.push([item, copy]);
      } else setField(to, name, scalarWithoutSecrets(item));
    }
  }
  return root;
}

/** JSON text of `value` holding no form of a registered key (the marker alone if a run spans its punctuation). */
export function jsonWithoutSecrets(value: unknown): string {
  const text = writeJson(withoutSecrets(value)) ?? 'null';
  return containsSecret(text) ? JSON.stringify(SECRET_MARKER) : text;
}

/** Per table: the row positions that hold text or JSON (amounts and timestamps were checked as such). */
const SCANNED = new WeakMap<StreamTable, Array<{ index: number; json: boolean }>>();
function scanned(table: StreamTable): Array<{ index: number; json: boolean }> {
  let columns = SCANNED.get(table);
  if (!columns) {
    columns = table.columns.flatMap((c, index) =>
      c.type === 'text' || c.type === 'json' || c.type === 'jsonb'
        ? [{ index, json: c.type !== 'text' }]
        : [],
    );
    SCANNED.set(table, columns);
  }
  return columns;
}

/**
 * Replaces, in `row` itself, every form and run of a registered key in its text and JSON values; true
 * when one was found. (The id is the row's first value: a caller that finds it changed must not store
 * the row.)
 */
export function scrubEchoedKey(row: Row, table: StreamTable): boolean {
  // the common record holds no key: one call looks through the whole row; the text and JSON values are
  // looked at one by one only when it found something
  if (!anyContainsSecret(row)) return false;
  let found = false;
  for (const { index, json } of scanned(table)) {
    const value = row[index];
    if (value === null || value === undefined || !containsSecret(value)) continue;
    found = true;
    row[index] = json ? jsonWithoutSecrets(parseExactJson(value)) : replaceSecrets(value);
  }
  return found;
}
