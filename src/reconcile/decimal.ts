/**
 * Exact decimal arithmetic on strings (BigInt scaled by a power of ten), for amount sums that Postgres
 * does not compute (the service's side of a reconcile). Never a float.
 */
const DECIMAL = /^(-?)(\d+)(?:\.(\d+))?$/;

interface Scaled {
  units: bigint;
  scale: number;
}

function parse(text: string): Scaled {
  const m = DECIMAL.exec(text.trim());
  if (!m) throw new RangeError(`not a plain decimal: "${text}"`);
  const fraction = m[3] ?? '';
  const units = BigInt(`${m[2]}${fraction}`);
  return { units: m[1] === '-' ? -units : units, scale: fraction.length };
}

function rescale(v: Scaled, scale: number): bigint {
  return v.units * 10n ** BigInt(scale - v.scale);
}

function format(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** Sum of decimal strings, in canonical form (no trailing fraction zeros): "1500.5" + "99.50" = "1600". */
export function sumDecimals(values: Iterable<string>): string {
  let scale = 0;
  const parsed: Scaled[] = [];
  for (const v of values) {
    const p = parse(v);
    parsed.push(p);
    scale = Math.max(scale, p.scale);
  }
  return format(
    parsed.reduce((acc, p) => acc + rescale(p, scale), 0n),
    scale,
  );
}

/** Canonical text of a decimal, so that "1600.50" and "1600.5" compare equal as strings. */
export function canonicalDecimal(text: string): string {
  return sumDecimals([text]);
}

export function isPlainDecimal(text: string): boolean {
  return DECIMAL.test(text.trim());
}
