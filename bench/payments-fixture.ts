/**
 * Deterministic payment records for the benchmark, shaped like the service's (a short description,
 * a small extra_data object, amounts with and without decimals).
 */
import type { Payment } from '../src/upstream/schemas.js';

const STATUSES = ['COMPLETE', 'COMPLETE', 'COMPLETE', 'FAILED', 'PENDING', 'TIMEOUT', 'INIT'] as const;
const TYPES = ['PAYMENT', 'DIRECT_PAYMENT', 'TRANSFERT', 'RECHARGE'] as const;
const OPERATORS = ['MTN_CM', 'ORANGE_CM', 'MOOV_CI', 'WAVE_SN'] as const;
const START = Date.parse('2024-01-01T00:00:00.000Z');

const pick = <T>(list: readonly T[], i: number): T => list[i % list.length] as T;

export function benchPayment(i: number): Payment {
  const created = START + i * 7_919; // ~8 s apart: 200k records span ~18 days
  return {
    id: `pay_${String(i).padStart(9, '0')}`,
    reference: `REF${(i * 2_654_435_761) % 1e10}`,
    amount: i % 3 === 0 ? String(100 + (i % 50_000)) : `${100 + (i % 50_000)}.${i % 100}`,
    description: `Order #${i} "bench", line ${i % 7}`,
    status: pick(STATUSES, i),
    transaction_type: pick(TYPES, i),
    phone: `+2376${String(i % 1e8).padStart(8, '0')}`,
    service_mobile_code: pick(OPERATORS, i),
    extra_data: { orderId: i, channel: pick(['web', 'ussd', 'app'], i), items: i % 5 },
    createdAt: new Date(created).toISOString(),
    updatedAt: new Date(created + 60_000).toISOString(),
    organization_id: `org_${i % 20}`,
    api_key_id: `key_${i % 40}`,
  };
}

export function benchPayments(count: number): Payment[] {
  return Array.from({ length: count }, (_, i) => benchPayment(i));
}
