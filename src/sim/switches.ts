/**
 * Default switches and the check applied to switches that arrive from outside (control route, CLI).
 * The defaults answer the interface's open points in the plainest way: wrapper pages, both bounds
 * inclusive, ascending order, no cap, no faults, no anomalies, 201 on initialize.
 * Structured switches are checked with zod (the house's schema library), scalar ones with small checks.
 */
import { z } from 'zod';
import type { SimStream, SimSwitches } from './types.js';

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
  duplicateRate: 0,
  duplicateIds: [],
  duplicateOffset: 1,
  duplicateInPlace: false,
  copyVariant: 'identical',
  copyUpdatedAt: 'same',
  totalOverride: null,
  timestampOverrides: {},
  pastEnd: 'empty',
  pageCycle: null,
  trickle: null,
  outage: 'none',
  latencyMs: 0,
  rateLimitRps: null,
  rateLimitWindowMs: 1000,
  paymentExtraFields: {},
  transferExtraFields: {},
  fieldChanges: [],
  echoKey: [],
  keyInErrors: 'none',
});

/** Timestamps no real record has: for `timestampOverrides`. */
export const FAR_FUTURE = '9999-12-31T23:59:59.000Z';
export const FAR_PAST = '1999-12-31T23:59:59.000Z';
export const EPOCH = '1970-01-01T00:00:00.000Z';

/**
 * Two fields the interface does not list, for `paymentExtraFields`/`transferExtraFields`. Values are
 * JSON text, served verbatim: `125.50` keeps its trailing zero.
 */
export const DEFAULT_EXTRA_FIELDS: Readonly<Record<string, string>> = Object.freeze({
  fee_amount: '125.50',
  channel: '"ussd"',
});

/** The interface's fields per stream: what `fieldChanges` may change and extra fields may not reuse. */
export const KNOWN_FIELDS: Readonly<Record<SimStream, readonly string[]>> = {
  payments: [
    'id',
    'reference',
    'amount',
    'description',
    'status',
    'transaction_type',
    'phone',
    'service_mobile_code',
    'extra_data',
    'createdAt',
    'updatedAt',
    'organization_id',
    'api_key_id',
  ],
  transfers: [
    'id',
    'reference',
    'amount',
    'name',
    'phone',
    'service_mobile_code',
    'status',
    'createdAt',
    'updatedAt',
  ],
};

type Check = (v: unknown) => boolean;
const isRate: Check = (v) => typeof v === 'number' && v >= 0 && v <= 1;
const isCount: Check = (v) => Number.isInteger(v) && (v as number) >= 0;
const isPositive: Check = (v) => Number.isInteger(v) && (v as number) >= 1;
const isBool: Check = (v) => typeof v === 'boolean';
const isOrder: Check = (v) => v === 'asc' || v === 'desc' || v === 'unordered';
const oneOf =
  (...values: unknown[]): Check =>
  (v) =>
    values.includes(v);
const fits =
  (schema: z.ZodType): Check =>
  (v) =>
    schema.safeParse(v).success;

const isJsonText = (text: string): boolean => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};

/** Extra fields: names the stream does not know, each with valid JSON text. */
const extraFields = (stream: SimStream): Check =>
  fits(
    z.record(
      z.string().refine((name) => name !== '' && !KNOWN_FIELDS[stream].includes(name)),
      z.string().refine(isJsonText),
    ),
  );

const timestamp = z.string().refine((text) => Number.isFinite(Date.parse(text)));
const fieldChange = z
  .object({
    stream: z.enum(['payments', 'transfers']),
    field: z.string(),
    to: z.enum(['missing', 'string', 'null', 'number']),
    rate: z.number().min(0).max(1),
  })
  .strict()
  .refine((c) => KNOWN_FIELDS[c.stream].includes(c.field));

const CHECKS: Record<keyof SimSwitches, Check> = {
  shape: oneOf('array', 'wrapper', 'alternate'),
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
  initializeStatus: oneOf(200, 201),
  duplicateRate: isRate,
  duplicateIds: fits(z.array(z.string())),
  duplicateOffset: isPositive,
  duplicateInPlace: (v) => typeof v === 'boolean',
  copyVariant: oneOf('identical', 'status', 'amount'),
  copyUpdatedAt: oneOf('same', 'later', 'earlier'),
  totalOverride: (v) => v === null || (typeof v === 'number' && Number.isFinite(v)),
  timestampOverrides: fits(
    z.record(z.string(), z.object({ createdAt: timestamp, updatedAt: timestamp }).partial().strict()),
  ),
  pastEnd: oneOf('empty', 'repeat-last', 'wrap'),
  pageCycle: (v) =>
    v === null ||
    fits(
      z
        .object({ after: z.number().int().min(1), back: z.number().int().min(0) })
        .strict()
        .refine((c) => c.back < c.after),
    )(v),
  trickle: (v) => v === null || isPositive(v),
  outage: oneOf('none', 'unavailable', 'reset', 'refused'),
  latencyMs: isCount,
  rateLimitRps: (v) => v === null || (typeof v === 'number' && Number.isFinite(v) && v > 0),
  rateLimitWindowMs: isPositive,
  paymentExtraFields: extraFields('payments'),
  transferExtraFields: extraFields('transfers'),
  fieldChanges: fits(z.array(fieldChange)),
  echoKey: fits(z.array(z.enum(['api_key_id', 'description', 'extra_data']))),
  keyInErrors: oneOf('none', 'whole', 'part'),
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
