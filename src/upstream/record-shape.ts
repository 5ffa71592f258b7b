/**
 * A record's shape against the interface's: the fields it carries that the interface does not list (kept,
 * as `unknownFields`), and, for a record the schema refused, the listed fields it lacks or sends with
 * another JSON type (announced as field sightings; the record itself stays quarantined). Both are read
 * from the schemas (schemas.ts), never written down twice: the field names from each object schema's
 * shape, their JSON types from zod's own JSON Schema of it.
 */
import { z } from 'zod';
import { LosslessNumber } from 'lossless-json';
import { writeJson } from './json-writer.js';

/** What the shape checks know of one record schema. */
export interface RecordShape {
  /** The fields the interface lists. */
  known: ReadonlySet<string>;
  /** Per listed field, the JSON types it may have (`string`, `number`, `null`, `object`, …). */
  types: ReadonlyMap<string, ReadonlySet<string>>;
}

export type FieldChange = 'missing' | 'retyped';

/** A listed field a record lacks, or sends with a JSON type the interface does not give it. */
export interface FieldDrift {
  field: string;
  change: FieldChange;
  /** What the interface gives the field and what came, in words (`expected string, received number`). */
  detail: string;
  /** The value received (retyped only). */
  value?: unknown;
}

type JsonSchemaNode = { type?: string | string[]; anyOf?: JsonSchemaNode[]; oneOf?: JsonSchemaNode[] };

/** The JSON types a JSON Schema node allows; a node zod cannot represent (a custom type) adds none. */
function typesOf(node: JsonSchemaNode): string[] {
  const own = node.type === undefined ? [] : Array.isArray(node.type) ? node.type : [node.type];
  const members = [...(node.anyOf ?? []), ...(node.oneOf ?? [])].flatMap(typesOf);
  return [...own, ...members].map((t) => (t === 'integer' ? 'number' : t));
}

export function shapeOf(schema: z.ZodObject): RecordShape {
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as {
    properties?: Record<string, JsonSchemaNode>;
  };
  const types = new Map<string, ReadonlySet<string>>();
  for (const [field, node] of Object.entries(json.properties ?? {})) types.set(field, new Set(typesOf(node)));
  return { known: new Set(Object.keys(schema.shape)), types };
}

/** The JSON type of a parsed value, as JSON Schema names it. */
export function jsonTypeOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (value instanceof LosslessNumber) return 'number';
  return typeof value; // string, number, boolean, object
}

/** A parsed value's JSON text, every number's digits as parsed (a LosslessNumber's as sent). */
function valueText(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number': // a double's shortest form is its literal: the page's scan sent any other to LosslessNumber
    case 'boolean':
      return String(value);
    default:
      return writeJson(value) ?? 'null';
  }
}

/**
 * The fields of `raw` that are not in `known`, as the JSON text of an object (in the order sent, numbers
 * with their digits), or undefined when it has none. `raw` passed a schema whose every field is
 * required, so it holds all of `known`: only a record with more keys than that can hold an unknown one,
 * and counting its keys is all the common record costs. Written straight to text: no object is built.
 *
 * Joined from its parts in one go, the text is one flat string from the start (built by `+` it would be a
 * tree of a dozen small strings per record, kept while the record waits for its page to be written, and
 * copied flat by the first look through it). Which keys are unknown is worked out once per key order: a
 * stream's records repeat the same keys in the same order.
 */
export function unknownFieldsOf(
  raw: Record<string, unknown>,
  known: ReadonlySet<string>,
): string | undefined {
  // counted, and compared with the last key order that had unknown keys, in one pass
  const last = lastOrder?.known === known ? lastOrder : null;
  let count = 0;
  let same = last !== null;
  for (const key in raw) {
    if (same && key !== last?.keys[count]) same = false;
    count++;
  }
  if (count <= known.size) return undefined;
  let unknown: readonly string[];
  if (same && last !== null && count === last.keys.length) unknown = last.unknown;
  else {
    const keys: string[] = [];
    for (const key in raw) keys.push(key);
    unknown = keys.filter((key) => !known.has(key));
    lastOrder = { known, keys, unknown };
  }
  const parts = new Array<string>(unknown.length * 3 + 1);
  let p = 0;
  for (let i = 0; i < unknown.length; i++) {
    const key = unknown[i] as string;
    parts[p++] = i === 0 ? '{' : ',';
    parts[p++] = keyText(key);
    parts[p++] = valueText(raw[key]);
  }
  parts[p] = unknown.length === 0 ? '{}' : '}';
  return parts.join('');
}

/** A key order with unknown keys, and which of its keys those are (for one `known`). */
interface KeyOrder {
  known: ReadonlySet<string>;
  keys: readonly string[];
  unknown: readonly string[];
}

/** The last key order seen with unknown keys. */
let lastOrder: KeyOrder | null = null;

/** A few hundred field names' `"name":` texts, kept: every record of a stream repeats the same names. */
const KEY_TEXTS = new Map<string, string>();
const KEY_TEXTS_KEPT = 256;

function keyText(key: string): string {
  const known = KEY_TEXTS.get(key);
  if (known !== undefined) return known;
  const text = `${JSON.stringify(key)}:`;
  if (KEY_TEXTS.size < KEY_TEXTS_KEPT) KEY_TEXTS.set(key, text);
  return text;
}

/**
 * The listed fields of a refused record that are absent or of another JSON type (`fields`: the ones the
 * schema complained about). A value of the right type that the schema refused for another reason (an
 * unknown status, a malformed timestamp) is no change of shape.
 */
export function driftOf(raw: unknown, fields: Iterable<string>, shape: RecordShape): FieldDrift[] {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return [];
  const out: FieldDrift[] = [];
  for (const field of new Set(fields)) {
    const types = shape.types.get(field);
    if (!types || types.size === 0) continue;
    const expected = [...types].join(' or ');
    if (!Object.hasOwn(raw, field)) {
      out.push({ field, change: 'missing', detail: `expected ${expected}, received nothing` });
      continue;
    }
    const value = (raw as Record<string, unknown>)[field];
    const received = jsonTypeOf(value);
    if (!types.has(received))
      out.push({ field, change: 'retyped', detail: `expected ${expected}, received ${received}`, value });
  }
  return out;
}
