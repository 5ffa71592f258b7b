/**
 * The careful JSON reader, for the bodies the native parser would read wrongly: a number a double would
 * alter (kept as `LosslessNumber`), or an object that repeats a key (JSON.parse silently keeps the last
 * value; a repeated `amount` would change money without a word). It is iterative — an explicit stack, no
 * recursion — so a record nested thousands of levels deep costs memory in proportion to its size and
 * never the call stack.
 *
 * An object that repeats a key keeps the last value (as JSON.parse would) and carries the repeated names
 * under the `DUPLICATE_KEYS` symbol (not enumerable: no serialiser sees it); the record checks
 * (record-limits.ts) turn that into a reject naming the key.
 */
import { LosslessNumber } from 'lossless-json';

export const DUPLICATE_KEYS = Symbol('paysync.duplicateKeys');

/** The keys an object received more than once, or an empty list. */
export function duplicateKeysOf(value: object): readonly string[] {
  return (value as { [DUPLICATE_KEYS]?: string[] })[DUPLICATE_KEYS] ?? [];
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const WS = /[ \t\n\r]*/y;

type Frame =
  | { kind: 'array'; value: unknown[] }
  | { kind: 'object'; value: Record<string, unknown>; key: string | null; seen: Set<string> };

function fail(text: string, at: number, what: string): never {
  throw new SyntaxError(`${what} at position ${at} of ${text.length}`);
}

/** End index (just past the closing quote) of the string opening at `start`. */
function stringEnd(text: string, start: number): number {
  let from = start + 1;
  for (;;) {
    const quote = text.indexOf('"', from);
    if (quote < 0) fail(text, start, 'unterminated string');
    let backslashes = 0;
    for (let b = quote - 1; text.charCodeAt(b) === 92; b--) backslashes++;
    if (backslashes % 2 === 0) return quote + 1;
    from = quote + 1;
  }
}

function numberValue(literal: string): number | LosslessNumber {
  return String(Number(literal)) === literal ? Number(literal) : new LosslessNumber(literal);
}

function setKey(frame: Extract<Frame, { kind: 'object' }>, key: string, value: unknown): void {
  if (frame.seen.has(key)) {
    const target = frame.value as { [DUPLICATE_KEYS]?: string[] };
    if (!target[DUPLICATE_KEYS]) {
      Object.defineProperty(target, DUPLICATE_KEYS, { value: [], enumerable: false });
    }
    if (!target[DUPLICATE_KEYS]?.includes(key)) target[DUPLICATE_KEYS]?.push(key);
  }
  frame.seen.add(key);
  // defineProperty: a key named __proto__ is data, never the object's prototype
  Object.defineProperty(frame.value, key, { value, enumerable: true, writable: true, configurable: true });
}

/** Parses JSON text exactly (see the file comment). Throws SyntaxError on anything that is not JSON. */
export function readJsonCarefully(text: string): unknown {
  const stack: Frame[] = [];
  let pos = 0;
  let result: unknown;
  let done = false;
  const skipWs = () => {
    WS.lastIndex = pos;
    WS.exec(text);
    pos = WS.lastIndex;
  };
  const place = (value: unknown) => {
    const top = stack[stack.length - 1];
    if (!top) {
      result = value;
      done = true;
    } else if (top.kind === 'array') top.value.push(value);
    else {
      setKey(top, top.key as string, value);
      top.key = null;
    }
  };
  // expect: 'value' | 'key' (or '}' right after '{') | 'after' (',' or a closer)
  let expect: 'value' | 'key' | 'after' = 'value';
  let first = false; // just after an opener: a closer is allowed at once
  while (!done) {
    skipWs();
    const c = text[pos];
    if (c === undefined) fail(text, pos, 'unexpected end of JSON');
    const top = stack[stack.length - 1];
    if (expect === 'after') {
      if (!top) fail(text, pos, 'unexpected text');
      if (c === ',') {
        pos++;
        expect = top.kind === 'array' ? 'value' : 'key';
        first = false;
      } else if ((c === ']' && top.kind === 'array') || (c === '}' && top.kind === 'object')) {
        pos++;
        stack.pop();
        place(top.value);
      } else fail(text, pos, `unexpected ${JSON.stringify(c)}`);
      continue;
    }
    if (first && ((c === ']' && top?.kind === 'array') || (c === '}' && top?.kind === 'object'))) {
      pos++;
      stack.pop();
      first = false;
      expect = 'after';
      place(top.value);
      continue;
    }
    first = false;
    if (expect === 'key') {
      if (c !== '"' || top?.kind !== 'object') fail(text, pos, 'expected a key');
      const end = stringEnd(text, pos);
      top.key = JSON.parse(text.slice(pos, end)) as string;
      pos = end;
      skipWs();
      if (text[pos] !== ':') fail(text, pos, 'expected ":"');
      pos++;
      expect = 'value';
      continue;
    }
    // a value
    if (c === '{') {
      pos++;
      stack.push({ kind: 'object', value: {}, key: null, seen: new Set() });
      expect = 'key';
      first = true;
    } else if (c === '[') {
      pos++;
      stack.push({ kind: 'array', value: [] });
      expect = 'value';
      first = true;
    } else if (c === '"') {
      const end = stringEnd(text, pos);
      const value = JSON.parse(text.slice(pos, end)) as string;
      pos = end;
      expect = 'after';
      place(value);
    } else if (text.startsWith('true', pos) || text.startsWith('null', pos)) {
      const value = text[pos] === 't' ? true : null;
      pos += 4;
      expect = 'after';
      place(value);
    } else if (text.startsWith('false', pos)) {
      pos += 5;
      expect = 'after';
      place(false);
    } else {
      NUMBER.lastIndex = pos;
      const m = NUMBER.exec(text);
      if (!m) fail(text, pos, `unexpected ${JSON.stringify(c)}`);
      pos = NUMBER.lastIndex;
      expect = 'after';
      place(numberValue(m[0]));
    }
  }
  skipWs();
  if (pos < text.length) fail(text, pos, 'unexpected text after the JSON value');
  return result;
}
