/**
 * Seeded randomness for the simulator. Everything it generates must be reproducible from the seed, so
 * `Math.random` is never used: mulberry32 for streams, a 32-bit mix (splitmix-style) for values derived
 * from a seed and an index without walking a stream.
 */

export type Rng = () => number;

/** mulberry32: a tiny, fast PRNG with a 2^32 period; plenty for test data. Returns floats in [0, 1). */
export function mulberry32(seed: number): Rng {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Mixes up to four 32-bit integers into one well-spread 32-bit hash (the splitmix32 finaliser, chained).
 * Fixed arity on purpose: it runs once per generated record and a rest parameter would allocate.
 */
export function mix32(a: number, b = 0, c = 0, d = 0): number {
  let h = 0x9e3779b9;
  h = step(h, a);
  h = step(h, b);
  h = step(h, c);
  return step(h, d) >>> 0;
}

function step(h: number, v: number): number {
  h = Math.imul(h ^ (v >>> 0), 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** FNV-1a over a string's UTF-16 units, then mixed: a stable 32-bit key for an id. */
export function hashString(text: string, seed = 0): number {
  let h = 0x811c9dc5 ^ seed;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return mix32(h);
}

/** `count` lowercase hex digits from a 32-bit-at-a-time stream (ids and keys). */
export function hexOf(rng: Rng, count: number): string {
  let out = '';
  while (out.length < count)
    out += Math.floor(rng() * 4294967296)
      .toString(16)
      .padStart(8, '0');
  return out.slice(0, count);
}

export function pick<T>(rng: Rng, items: readonly T[]): T {
  return items[Math.floor(rng() * items.length)] as T;
}

/** An integer in [min, max]. */
export function intBetween(rng: Rng, min: number, max: number): number {
  return min + Math.floor(rng() * (max - min + 1));
}

/**
 * Whether the record with this id is among a `rate` fraction chosen for a purpose (`salt`): the same
 * records for the same seed on every call, so a service anomaly stays with its records.
 */
export function chosenById(id: string, seed: number, salt: number, rate: number): boolean {
  if (rate >= 1) return true;
  return rate > 0 && hashString(id, mix32(seed, salt)) / 4294967296 < rate;
}
