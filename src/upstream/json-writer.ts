/**
 * JSON text of any parsed value, iteratively: JSON.stringify recurses and throws "Maximum call stack size
 * exceeded" on a record nested a few thousand levels deep, and lossless-json's stringify recurses too.
 * Same output as JSON.stringify for what a JSON parser can produce (objects, arrays, strings, finite
 * numbers, booleans, null), plus `LosslessNumber` written as its exact text.
 */
import { LosslessNumber } from 'lossless-json';

type Frame =
  | { kind: 'array'; items: readonly unknown[]; next: number }
  | { kind: 'object'; entries: [string, unknown][]; next: number; wrote: boolean };

function scalar(value: unknown): string | undefined {
  if (value === null) return 'null';
  if (value instanceof LosslessNumber) return value.toString();
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return value.toString();
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    default:
      return undefined; // objects are not scalars
  }
}

const isContainer = (v: unknown): v is object =>
  v !== null && typeof v === 'object' && !(v instanceof LosslessNumber);

/** Deepest value handed to JSON.stringify (far below where its recursion could overflow the stack). */
const NATIVE_DEPTH = 64;

/**
 * Whether JSON.stringify writes `value` exactly as the walk below would: only plain objects and arrays,
 * strings, finite or non-finite numbers, booleans and null, at most NATIVE_DEPTH levels deep. Anything else
 * (a LosslessNumber, a bigint, an object with a prototype of its own and maybe a toJSON) goes the long way.
 * Iterative; allocates only its stack.
 */
function plainJson(value: object): boolean {
  const stack: unknown[] = [value];
  const depths: number[] = [1];
  while (stack.length > 0) {
    const v = stack.pop();
    const depth = depths.pop() as number;
    if (v === null || typeof v !== 'object') {
      const t = typeof v;
      if (t === 'string' || t === 'number' || t === 'boolean' || v === null || t === 'undefined') continue;
      return false;
    }
    if (depth > NATIVE_DEPTH) return false;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        stack.push(v[i]);
        depths.push(depth + 1);
      }
      continue;
    }
    const proto: unknown = Object.getPrototypeOf(v);
    if (proto !== Object.prototype && proto !== null) return false;
    for (const key in v) {
      stack.push((v as Record<string, unknown>)[key]);
      depths.push(depth + 1);
    }
  }
  return true;
}

/** The JSON text of `value` (undefined when JSON.stringify would give undefined). Never recurses. */
export function writeJson(value: unknown): string | undefined {
  if (!isContainer(value)) return scalar(value);
  // the common record: JSON.stringify is native and several times faster than the walk below
  if (plainJson(value)) return JSON.stringify(value);
  const out: string[] = [];
  const stack: Frame[] = [];
  const open = (v: object) => {
    if (Array.isArray(v)) {
      out.push('[');
      stack.push({ kind: 'array', items: v, next: 0 });
    } else {
      out.push('{');
      stack.push({ kind: 'object', entries: Object.entries(v), next: 0, wrote: false });
    }
  };
  open(value);
  while (stack.length > 0) {
    const top = stack[stack.length - 1] as Frame;
    if (top.kind === 'array') {
      if (top.next >= top.items.length) {
        out.push(']');
        stack.pop();
        continue;
      }
      const item = top.items[top.next];
      if (top.next > 0) out.push(',');
      top.next++;
      if (isContainer(item)) open(item);
      else out.push(scalar(item) ?? 'null');
    } else {
      if (top.next >= top.entries.length) {
        out.push('}');
        stack.pop();
        continue;
      }
      const [key, item] = top.entries[top.next] as [string, unknown];
      top.next++;
      const text = isContainer(item) ? '' : scalar(item);
      if (text === undefined) continue; // skipped, as JSON.stringify skips undefined and functions
      if (top.wrote) out.push(',');
      top.wrote = true;
      out.push(JSON.stringify(key), ':');
      if (isContainer(item)) open(item);
      else out.push(text);
    }
  }
  return out.join('');
}
