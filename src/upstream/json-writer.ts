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

/** The JSON text of `value` (undefined when JSON.stringify would give undefined). Never recurses. */
export function writeJson(value: unknown): string | undefined {
  if (!isContainer(value)) return scalar(value);
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
