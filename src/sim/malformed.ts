/**
 * Malformed records (`malformed: N`): each organisation gets N bad payments and N bad transfers, placed
 * among the past records, each with one defect, the kinds taken in turn. Every one must fail
 * src/upstream/schemas.ts (or the record checks around it); none is part of the truth. Their JSON is fixed
 * at creation (`raw`).
 *
 * After the schema defects come the poison kinds: records a schema alone lets through but that
 * PostgreSQL, a serialiser or the stack refuses (each, unchecked, fails its whole page on every retry). A
 * defect that returns text replaces the record's JSON with it (a duplicate key or a `1e200000` literal
 * cannot be written by JSON.stringify).
 */
import { mix32, mulberry32 } from './prng.js';
import type { PaymentRecord, TransferRecord } from './records.js';

type Fields = Record<string, unknown>;
/** The record's raw JSON, replacing what JSON.stringify would write. */
class RawText {
  constructor(readonly text: string) {}
}
/** Changes the fields, or returns RawText (other return values are ignored). */
type Defect = (f: Fields) => unknown;

/** Nested `{"a":…}` objects, `levels` deep. */
const deep = (levels: number): string => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

const json = (f: Fields): string => JSON.stringify(f);
const rawText = (text: string): RawText => new RawText(text);

/** Replaces `"name":<value>` in a record's JSON by `text`. */
function rewrite(f: Fields, name: string, text: string): RawText {
  const raw = json(f);
  const field = `"${name}":${JSON.stringify(f[name])}`;
  return rawText(raw.replace(field, text));
}

/** Poison kinds shared by both streams: each passes a schema alone, and broke pages before the checks. */
function poisons(amountField: string): [string, Defect][] {
  return [
    ['amount-overflow', (f) => rewrite(f, amountField, `"${amountField}":1e200000`)],
    ['amount-scale', (f) => rewrite(f, amountField, `"${amountField}":0.${'0'.repeat(29)}1`)],
    ['year-zero', (f) => void (f.createdAt = '0000-01-01T00:00:00Z')],
    ['offset-16', (f) => void (f.updatedAt = String(f.updatedAt).replace(/(\.\d+)?Z$/, '+16:00'))],
    ['long-id', (f) => void (f.id = `bad_long_${'x'.repeat(9_000)}`)],
    [
      'duplicate-key',
      (f) => rewrite(f, amountField, `"${amountField}":1,"${amountField}":${String(f[amountField])}`),
    ],
    [
      'duplicate-key-lossless',
      (f) => rewrite(f, amountField, `"${amountField}":1500.50,"${amountField}":${String(f[amountField])}`),
    ],
    ['nul-text', (f) => void (f.reference = 'BAD\u0000NUL')],
    ['lone-surrogate', (f) => void (f.reference = 'BAD\ud800')],
  ];
}

const OVERSIZED = `Trop long ${'x'.repeat(10_001)}`;

/** Payment defects, in turn: each breaks exactly one rule of PaymentSchema. */
const PAYMENT_DEFECTS: readonly [string, Defect][] = [
  ['missing-field', (f) => delete f.reference],
  ['amount-string', (f) => (f.amount = String(f.amount))],
  ['unknown-status', (f) => (f.status = 'REFUNDED')],
  ['invalid-date', (f) => (f.createdAt = 'yesterday at noon')],
  ['extra-data-array', (f) => (f.extra_data = ['not', 'an', 'object'])],
  ['extra-data-string', (f) => (f.extra_data = '{"k":1}')],
  ['oversized-description', (f) => (f.description = OVERSIZED)],
  ['null-id', (f) => (f.id = null)],
  ...poisons('amount'),
  ['deep-extra-data', (f) => rawText(json(f).replace('"extra_data":{}', `"extra_data":${deep(5_000)}`))],
];

const TRANSFER_DEFECTS: readonly [string, Defect][] = [
  ['missing-field', (f) => delete f.phone],
  ['amount-string', (f) => (f.amount = String(f.amount))],
  ['empty-status', (f) => (f.status = '')],
  ['invalid-date', (f) => (f.updatedAt = '31/02/2024')],
  ['oversized-name', (f) => (f.name = OVERSIZED)],
  ['null-id', (f) => (f.id = null)],
  ...poisons('amount'),
];

/** The kinds, in the order they are taken (a record's id starts `bad_<kind>_`). */
export const PAYMENT_DEFECT_KINDS: readonly string[] = PAYMENT_DEFECTS.map(([kind]) => kind);
export const TRANSFER_DEFECT_KINDS: readonly string[] = TRANSFER_DEFECTS.map(([kind]) => kind);

export const MALFORMED_KINDS = { payments: PAYMENT_DEFECTS.length, transfers: TRANSFER_DEFECTS.length };

interface BadPlan {
  seed: number;
  orgIndex: number;
  organizationId: string;
  apiKeyId: string;
  count: number;
  /** Bad records are placed in [from, to). */
  from: number;
  to: number;
}

function times(plan: BadPlan, salt: number): number[] {
  const rng = mulberry32(mix32(plan.seed, plan.orgIndex, salt));
  return Array.from({ length: plan.count }, () => plan.from + Math.floor(rng() * (plan.to - plan.from)));
}

export function malformedPayments(plan: BadPlan): PaymentRecord[] {
  return times(plan, 0x62616470).map((createdAt, i) => {
    const [kind, defect] = PAYMENT_DEFECTS[i % PAYMENT_DEFECTS.length] as [string, Defect];
    const iso = new Date(createdAt).toISOString();
    const fields: Fields = {
      id: `bad_${kind}_${plan.orgIndex}_${i}`,
      reference: `BAD-${i}`,
      amount: 1000 + i,
      description: `Malformed record: ${kind}`,
      status: 'COMPLETE',
      transaction_type: 'PAYMENT',
      phone: null,
      service_mobile_code: null,
      extra_data: {},
      createdAt: iso,
      updatedAt: iso,
      organization_id: plan.organizationId,
      api_key_id: plan.apiKeyId,
    };
    const raw = defect(fields);
    return badRecord(fields, createdAt, i, plan, raw) as PaymentRecord;
  });
}

export function malformedTransfers(plan: BadPlan): TransferRecord[] {
  return times(plan, 0x62616474).map((createdAt, i) => {
    const [kind, defect] = TRANSFER_DEFECTS[i % TRANSFER_DEFECTS.length] as [string, Defect];
    const iso = new Date(createdAt).toISOString();
    const fields: Fields = {
      id: `bad_${kind}_${plan.orgIndex}_${i}`,
      reference: `BADT-${i}`,
      amount: 500 + i,
      name: 'Malformed Recipient',
      phone: '+22997000000',
      service_mobile_code: 'MTN_BJ',
      status: 'COMPLETE',
      createdAt: iso,
      updatedAt: iso,
    };
    const raw = defect(fields);
    return badRecord(fields, createdAt, i, plan, raw) as TransferRecord;
  });
}

/**
 * The stored form: the claimed status/type drive the list filters, `raw` is what is served. The sort id
 * of a null-id record is its would-be id, so ordering stays total.
 */
function badRecord(
  fields: Fields,
  createdAt: number,
  i: number,
  plan: BadPlan,
  raw: unknown,
): Partial<PaymentRecord> {
  return {
    id: typeof fields.id === 'string' ? fields.id : `bad_null-id_${plan.orgIndex}_${i}`,
    createdAt,
    pendingAt: Infinity,
    finalAt: createdAt,
    finalStatus: typeof fields.status === 'string' ? fields.status : 'COMPLETE',
    type: 'PAYMENT',
    apiKeyId: plan.apiKeyId,
    shuffleKey: mix32(plan.seed, plan.orgIndex, 0x626164, i),
    raw: raw instanceof RawText ? raw.text : JSON.stringify(fields),
  };
}
