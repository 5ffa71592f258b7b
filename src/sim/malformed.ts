/**
 * Malformed records (`malformed: N`): each organisation gets N bad payments and N bad transfers, placed
 * among the past records, each with one defect, the kinds taken in turn. Every one must fail
 * src/upstream/schemas.ts; none is part of the truth. Their JSON is fixed at creation (`raw`).
 */
import { mix32, mulberry32 } from './prng.js';
import type { PaymentRecord, TransferRecord } from './records.js';

type Fields = Record<string, unknown>;
type Defect = (f: Fields) => void;

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
];

const TRANSFER_DEFECTS: readonly [string, Defect][] = [
  ['missing-field', (f) => delete f.phone],
  ['amount-string', (f) => (f.amount = String(f.amount))],
  ['empty-status', (f) => (f.status = '')],
  ['invalid-date', (f) => (f.updatedAt = '31/02/2024')],
  ['oversized-name', (f) => (f.name = OVERSIZED)],
  ['null-id', (f) => (f.id = null)],
];

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
    defect(fields);
    return badRecord(fields, createdAt, i, plan) as PaymentRecord;
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
    defect(fields);
    return badRecord(fields, createdAt, i, plan) as TransferRecord;
  });
}

/**
 * The stored form: the claimed status/type drive the list filters, `raw` is what is served. The sort id
 * of a null-id record is its would-be id, so ordering stays total.
 */
function badRecord(fields: Fields, createdAt: number, i: number, plan: BadPlan): Partial<PaymentRecord> {
  return {
    id: typeof fields.id === 'string' ? fields.id : `bad_null-id_${plan.orgIndex}_${i}`,
    createdAt,
    pendingAt: Infinity,
    finalAt: createdAt,
    finalStatus: typeof fields.status === 'string' ? fields.status : 'COMPLETE',
    type: 'PAYMENT',
    apiKeyId: plan.apiKeyId,
    shuffleKey: mix32(plan.seed, plan.orgIndex, 0x626164, i),
    raw: JSON.stringify(fields),
  };
}
