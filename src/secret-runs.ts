/**
 * Finding runs of a secret's characters in text: every stretch of MIN_SECRET_RUN or more consecutive
 * characters that also appears, in the same order, in one of the given forms of a secret. A service that
 * quotes a piece of a key ("request-key=…" with 28 of its characters) is caught as surely as one that
 * echoes it whole. Pure and allocation-free on the common path: it runs on every error message and log
 * line.
 *
 * How: every MIN_SECRET_RUN-character window of every form is hashed (a polynomial hash, mod 2^32); the
 * text is scanned once with the same hash rolled one character at a time, a 64 Kibit filter rejects
 * almost every window before the table lookup, and a hit is confirmed by comparing characters. A run
 * longer than a window is the union of the windows it contains. Forms shorter than a window (possible
 * only for keys the settings refuse) are matched whole.
 *
 * `contains` runs on every text and JSON value of every record the service sends (the loader's check for
 * an echoed key), so it first proves absence cheaply: any window of W characters holds a 4-character
 * stretch starting at a multiple of STRIDE (5: 4 + 5 - 1 = W) in the text, so when no such aligned
 * stretch is a 4-character stretch of any form (one filter lookup per 5 characters, no allocation), no
 * window can match; only the windows around a stretch that passes the filter are looked up.
 */

/** The shortest run of a secret's characters that counts as the secret. */
export const MIN_SECRET_RUN = 8;

const W = MIN_SECRET_RUN;
const BASE = 0x01000193; // FNV's prime: odd, so multiplying by it mod 2^32 loses nothing
const BASE_POW = Array.from({ length: W - 1 }).reduce<number>((p) => Math.imul(p, BASE), 1); // BASE^(W-1)

export interface RunMatcher {
  contains(text: string): boolean;
  /** Whether any of `values` (null and undefined skipped) holds a run: one call for a record's fields. */
  containsAny(values: ReadonlyArray<string | null | undefined>): boolean;
  replace(text: string, marker: string): string;
}

function windowHash(text: string, at: number): number {
  let h = 0;
  for (let k = 0; k < W; k++) h = (Math.imul(h, BASE) + text.charCodeAt(at + k)) | 0;
  return h;
}

const bit = (h: number) => (h >>> 16) & 0xffff;

/** Every W-character window holds the 4 characters at the next multiple of STRIDE: W >= 4 + STRIDE - 1. */
const STRIDE = W - 3;

/** A 16-bit hash of the 4 UTF-16 units of `text` at `at` (the aligned-gram filter's index). */
function gramBit(text: string, at: number): number {
  const h =
    Math.imul(
      Math.imul(Math.imul(text.charCodeAt(at), BASE) + text.charCodeAt(at + 1), BASE) +
        text.charCodeAt(at + 2),
      BASE,
    ) + text.charCodeAt(at + 3);
  return (Math.imul(h, 0x9e3779b1) >>> 16) & 0xffff;
}

/** A matcher for runs of `forms` (each a text a secret can appear as). */
export function runMatcher(forms: readonly string[]): RunMatcher {
  const windows = new Map<number, string[]>();
  const filter = new Uint32Array(2048);
  const grams = new Uint32Array(2048); // every 4-character stretch of every form
  const short: string[] = [];
  for (const form of new Set(forms)) {
    if (form.length < W) {
      if (form.length > 0) short.push(form);
      continue;
    }
    for (let at = 0; at + 4 <= form.length; at++) {
      const g = gramBit(form, at);
      grams[g >>> 5]! |= 1 << (g & 31);
    }
    for (let at = 0; at + W <= form.length; at++) {
      const h = windowHash(form, at);
      const gram = form.slice(at, at + W);
      const list = windows.get(h);
      if (!list) windows.set(h, [gram]);
      else if (!list.includes(gram)) list.push(gram);
      filter[bit(h) >>> 5]! |= 1 << (bit(h) & 31);
    }
  }

  /** Calls `hit(start, end)` for each window of `text` that is a window of a form; stops when it returns true. */
  const scan = (text: string, hit: (start: number, end: number) => boolean): void => {
    for (const form of short) {
      for (let at = text.indexOf(form); at >= 0; at = text.indexOf(form, at + 1))
        if (hit(at, at + form.length)) return;
    }
    if (windows.size === 0 || text.length < W) return;
    let h = windowHash(text, 0);
    for (let at = 0; ; at++) {
      const b = bit(h);
      if ((filter[b >>> 5]! & (1 << (b & 31))) !== 0) {
        const grams = windows.get(h);
        if (grams?.some((g) => text.startsWith(g, at)) && hit(at, at + W)) return;
      }
      if (at + W >= text.length) return;
      h = (Math.imul((h - Math.imul(text.charCodeAt(at), BASE_POW)) | 0, BASE) + text.charCodeAt(at + W)) | 0;
    }
  };

  /** Whether the window of `text` at `at` is a window of a form. */
  const windowAt = (text: string, at: number): boolean =>
    windows.get(windowHash(text, at))?.some((g) => text.startsWith(g, at)) ?? false;

  /**
   * `contains` for texts when every form is at least a window long: a window at p holds the 4 characters
   * at q = p rounded up to a multiple of STRIDE, so only the windows around an aligned stretch that is a
   * stretch of a form (p from q - 4 to q) are looked up.
   */
  const containsWindow = (text: string): boolean => {
    const n = text.length;
    if (n < W || windows.size === 0) return false;
    for (let q = 0; q + 4 <= n; q += STRIDE) {
      const g = gramBit(text, q);
      if ((grams[g >>> 5]! & (1 << (g & 31))) === 0) continue;
      for (let at = Math.max(0, q - 4); at <= q && at + W <= n; at++) if (windowAt(text, at)) return true;
    }
    return false;
  };

  const contains = (text: string): boolean => {
    if (short.length === 0) return containsWindow(text);
    let found = false;
    scan(text, () => (found = true));
    return found;
  };

  return {
    contains,
    containsAny(values) {
      for (let i = 0; i < values.length; i++) {
        const value = values[i];
        if (value !== null && value !== undefined && contains(value)) return true;
      }
      return false;
    },
    replace(text, marker) {
      const spans: Array<[number, number]> = [];
      scan(text, (start, end) => {
        spans.push([start, end]);
        return false;
      });
      if (spans.length === 0) return text;
      spans.sort((a, b) => a[0] - b[0]);
      let out = '';
      let from = 0;
      let [start, end] = spans[0]!;
      for (const [s, e] of spans) {
        if (s <= end) end = Math.max(end, e);
        else {
          out += text.slice(from, start) + marker;
          from = end;
          [start, end] = [s, e];
        }
      }
      return out + text.slice(from, start) + marker + text.slice(end);
    },
  };
}
