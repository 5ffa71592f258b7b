/**
 * Valid Payment / Transfer output objects (what the zod schemas produce) for tests: every field set,
 * `amount` already an exact decimal string, timestamps ISO text. Ids are unique per call unless given.
 */
import type { Payment, Transfer } from '../../src/upstream/schemas.js';

let counter = 0;
const next = (): number => ++counter;

const BASE_TIME = Date.parse('2024-03-10T09:00:00.000Z');

/** An ISO timestamp `minutes` after 2024-03-10T09:00Z. */
export function at(minutes: number): string {
  return new Date(BASE_TIME + minutes * 60_000).toISOString();
}

export function makePayment(overrides: Partial<Payment> = {}): Payment {
  const n = next();
  return {
    id: `pay_${n}`,
    reference: `REF-${String(n).padStart(6, '0')}`,
    amount: '1500.5',
    description: `Order ${n}`,
    status: 'COMPLETE',
    transaction_type: 'PAYMENT',
    phone: '+237650000001',
    service_mobile_code: 'MTN_CM',
    extra_data: { orderId: n },
    createdAt: at(0),
    updatedAt: at(1),
    organization_id: 'org_1',
    api_key_id: 'key_1',
    ...overrides,
  };
}

export function makeTransfer(overrides: Partial<Transfer> = {}): Transfer {
  const n = next();
  return {
    id: `tr_${n}`,
    reference: `TRF-${String(n).padStart(6, '0')}`,
    amount: '25000',
    name: `Recipient ${n}`,
    phone: '+237670000002',
    service_mobile_code: 'ORANGE_CM',
    status: 'COMPLETE',
    createdAt: at(0),
    updatedAt: at(1),
    ...overrides,
  };
}
