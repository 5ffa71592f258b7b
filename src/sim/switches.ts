/**
 * Default switches and the check applied to switches that arrive from outside (control route, CLI).
 * The defaults answer the interface's open points in the plainest way: wrapper pages, both bounds
 * inclusive, ascending order, no cap, no faults, 201 on initialize.
 */
import type { SimSwitches } from './types.js';

export const DEFAULT_SWITCHES: Readonly<SimSwitches> = Object.freeze({
  shape: 'wrapper',
  pageCap: null,
  defaultPageSize: 10,
  dateFromInclusive: true,
  dateToInclusive: true,
  paymentOrder: 'asc',
  transferOrder: 'asc',
  ignoreDateFilter: false,
  ignorePage: false,
  rateLimitRate: 0,
  retryAfterSeconds: 1,
  serverErrorRate: 0,
  slowRate: 0,
  slowMs: 2000,
  resetRate: 0,
  notJsonRate: 0,
  totalOffset: 0,
  driftPerPage: 0,
  transferDriftPerPage: 0,
  initializeStatus: 201,
});

type Check = (v: unknown) => boolean;
const isRate: Check = (v) => typeof v === 'number' && v >= 0 && v <= 1;
const isCount: Check = (v) => Number.isInteger(v) && (v as number) >= 0;
const isPositive: Check = (v) => Number.isInteger(v) && (v as number) >= 1;
const isBool: Check = (v) => typeof v === 'boolean';
const isOrder: Check = (v) => v === 'asc' || v === 'desc' || v === 'unordered';

const CHECKS: Record<keyof SimSwitches, Check> = {
  shape: (v) => v === 'array' || v === 'wrapper' || v === 'alternate',
  pageCap: (v) => v === null || isPositive(v),
  defaultPageSize: isPositive,
  dateFromInclusive: isBool,
  dateToInclusive: isBool,
  paymentOrder: isOrder,
  transferOrder: isOrder,
  ignoreDateFilter: isBool,
  ignorePage: isBool,
  rateLimitRate: isRate,
  retryAfterSeconds: isCount,
  serverErrorRate: isRate,
  slowRate: isRate,
  slowMs: isCount,
  resetRate: isRate,
  notJsonRate: isRate,
  totalOffset: Number.isInteger,
  driftPerPage: isCount,
  transferDriftPerPage: isCount,
  initializeStatus: (v) => v === 200 || v === 201,
};

/** Problems with a partial switch set from outside, one line each (empty when valid). */
export function switchProblems(input: unknown): string[] {
  if (input === null || typeof input !== 'object' || Array.isArray(input))
    return ['switches must be an object'];
  return Object.entries(input).flatMap(([name, value]) => {
    const check = CHECKS[name as keyof SimSwitches] as Check | undefined;
    if (!check) return [`unknown switch "${name}"`];
    return check(value) ? [] : [`invalid value for switch "${name}": ${JSON.stringify(value)}`];
  });
}
