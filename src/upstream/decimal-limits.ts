/**
 * Whether a decimal literal fits a NUMERIC column, decided from its text alone (no BigInt, no expansion:
 * `1e200000` must not become 200,000 digits to be judged). PostgreSQL refuses an exponent beyond ±1000
 * and more than 131,072 integer or 16,383 fractional digits; amounts get much tighter limits
 * (AMOUNT_LIMITS): no payment is 10^30 of anything, and an amount the exports cannot print is a poison
 * record, not money.
 */
export interface DecimalLimits {
  /** Most digits before the decimal point (leading zeros not counted). */
  integerDigits: number;
  /** Most digits after the decimal point (trailing zeros not counted). */
  scale: number;
}

export const AMOUNT_LIMITS: DecimalLimits = { integerDigits: 30, scale: 20 };

const DECIMAL = /^-?(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/;

/** Why `text` does not fit the limits (a phrase to follow "amount"/"a number"), or null when it fits. */
export function decimalProblem(text: string, limits: DecimalLimits): string | null {
  const m = DECIMAL.exec(text);
  if (!m) return `is not a finite decimal (${clip(text)})`;
  const [, whole = '', fraction = '', exponentText = '0'] = m;
  const digits = (whole + fraction).replace(/^0+/, '');
  if (digits === '') return null; // zero, however written
  if (exponentText.replace(/^[+-]?0*/, '').length > 7) return `has an exponent out of range (${clip(text)})`;
  const exponent = Number(exponentText);
  const significant = whole.replace(/^0+/, '').length;
  const integerDigits = significant + exponent - (significant === 0 ? leadingFractionZeros(fraction) : 0);
  const scale = fraction.replace(/0+$/, '').length - exponent;
  if (integerDigits > limits.integerDigits)
    return `is out of range: more than ${limits.integerDigits} digits before the decimal point (${clip(text)})`;
  if (scale > limits.scale) return `has more than ${limits.scale} decimal places (${clip(text)})`;
  return null;
}

function leadingFractionZeros(fraction: string): number {
  const m = /^0*/.exec(fraction);
  return m ? m[0].length : 0;
}

const clip = (text: string): string =>
  text.length > 40 ? `${text.slice(0, 40)}…, ${text.length} characters` : text;
