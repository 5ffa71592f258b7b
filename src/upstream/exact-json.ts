/**
 * Exact JSON for money.
 *
 * The interface sends `amount` as a JSON number. `JSON.parse` turns every number into a double, which is
 * exact only when the literal is the double's own shortest form (what any JavaScript service writes:
 * `1500.5`, `250000000`). A literal such as `1500.50` or `12345678901234567.89` would come back changed.
 *
 * `parseExactJson` keeps the fast native parser for the common case and proves it safe: it scans every
 * number-looking literal in the text, and only when one of them would not survive a round trip through a
 * double does it parse with lossless-json, keeping those numbers as `LosslessNumber` (their exact text).
 * A false alarm (a number-like run inside a string) only costs the slower parser, never exactness.
 */
import { LosslessNumber, parse as parseLossless, stringify as stringifyLossless } from 'lossless-json';

const NUMBER_LITERAL = /[:[,]\s*(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g;

/** True when `literal` is exactly what `String(Number(literal))` gives back. */
export function isCanonicalNumber(literal: string): boolean {
  return String(Number(literal)) === literal;
}

function everyNumberIsCanonical(text: string): boolean {
  NUMBER_LITERAL.lastIndex = 0;
  for (let m = NUMBER_LITERAL.exec(text); m !== null; m = NUMBER_LITERAL.exec(text)) {
    if (!isCanonicalNumber(m[1] as string)) return false;
  }
  return true;
}

function parseNumberExactly(literal: string): number | LosslessNumber {
  return isCanonicalNumber(literal) ? Number(literal) : new LosslessNumber(literal);
}

/** Parses JSON text; numbers a double would alter come back as `LosslessNumber`. Throws SyntaxError. */
export function parseExactJson(text: string): unknown {
  if (everyNumberIsCanonical(text)) return JSON.parse(text);
  return parseLossless(text, null, parseNumberExactly);
}

export function isLosslessNumber(value: unknown): value is LosslessNumber {
  return value instanceof LosslessNumber;
}

/** The exact decimal text of a parsed JSON number. */
export function decimalText(value: number | LosslessNumber): string {
  return typeof value === 'number' ? String(value) : value.toString();
}

function containsLossless(value: unknown): boolean {
  if (value instanceof LosslessNumber) return true;
  if (Array.isArray(value)) return value.some(containsLossless);
  if (value !== null && typeof value === 'object') return Object.values(value).some(containsLossless);
  return false;
}

/** Serialises a parsed value back to JSON text, keeping every number exactly as it was sent. */
export function toExactJson(value: unknown): string {
  if (!containsLossless(value)) return JSON.stringify(value);
  return stringifyLossless(value) as string;
}

export { LosslessNumber };
