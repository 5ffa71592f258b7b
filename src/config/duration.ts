/** Durations in settings: a whole number and a unit, e.g. `90s`, `5m`, `3d`, `1h`, `250ms`. */
const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function parseDuration(text: string): number | null {
  const m = /^(\d+)(ms|s|m|h|d)$/.exec(text.trim());
  if (!m) return null;
  return Number(m[1]) * (UNIT_MS[m[2] as string] as number);
}

export function formatDuration(ms: number): string {
  for (const unit of ['d', 'h', 'm', 's'] as const) {
    const size = UNIT_MS[unit] as number;
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

/** A span for people to read: its two largest units, e.g. `12m 54s`, `3h 2m`, `2d 4h`. */
export function humanDuration(ms: number): string {
  const units: Array<[string, number]> = [
    ['d', UNIT_MS.d as number],
    ['h', UNIT_MS.h as number],
    ['m', UNIT_MS.m as number],
    ['s', UNIT_MS.s as number],
  ];
  let rest = Math.max(0, Math.round(ms / 1000) * 1000);
  const parts: string[] = [];
  for (const [unit, size] of units) {
    if (rest >= size || (unit === 's' && parts.length === 0)) {
      parts.push(`${Math.floor(rest / size)}${unit}`);
      rest %= size;
    }
    if (parts.length === 2) break;
  }
  return parts.join(' ');
}
