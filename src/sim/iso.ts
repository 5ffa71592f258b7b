/**
 * A fast `Date#toISOString` for serving: building a page formats two timestamps per record, and a Date
 * allocation per call would be the largest cost of a page. Day prefixes are cached (pages are mostly in time
 * order, and a simulator covers a few days); the time of day is assembled from lookup tables.
 * Valid for years 0000–9999, which is all the simulator produces.
 */
const DAY_MS = 86_400_000;
const TWO = Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0'));
const THREE = Array.from({ length: 1000 }, (_, i) => String(i).padStart(3, '0'));
const prefixes = new Map<number, string>();

function dayPrefix(day: number): string {
  let prefix = prefixes.get(day);
  if (prefix === undefined) {
    if (prefixes.size > 10_000) prefixes.clear();
    prefix = new Date(day * DAY_MS).toISOString().slice(0, 11);
    prefixes.set(day, prefix);
  }
  return prefix;
}

export function isoOf(ms: number): string {
  const day = Math.floor(ms / DAY_MS);
  let rest = ms - day * DAY_MS;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = Math.floor(rest / 1000);
  const millis = rest - seconds * 1000;
  return `${dayPrefix(day)}${TWO[hours]}:${TWO[minutes]}:${TWO[seconds]}.${THREE[millis]}Z`;
}
