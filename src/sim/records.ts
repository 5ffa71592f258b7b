/**
 * The simulator's internal records and how they look at a given simulated time. A record stores its
 * whole status trajectory (when it turns PENDING, when it reaches its final status); status and
 * `updatedAt` are computed lazily for the time asked, so advancing the clock costs nothing.
 * Text fields are stored pre-serialised as JSON so a page is built by concatenation, not JSON.stringify.
 */
import { isoOf as iso } from './iso.js';
import type { SimStream } from './types.js';

/** What both streams share: placement in time, a trajectory, and the hooks for malformed records. */
export interface Timeline {
  id: string;
  createdAt: number;
  /** When the record turns PENDING (payments only); Infinity when it never does. */
  pendingAt: number;
  /** When the record reaches `finalStatus`; Infinity when it never does. */
  finalAt: number;
  finalStatus: string;
  /** Stable seeded key for the `unordered` ordering. */
  shuffleKey: number;
  /** Malformed records only: the exact JSON served; they never change and are not part of the truth. */
  raw?: string;
  /** When the service touched the record outside its trajectory (it fixed a timestamp): `updatedAt` >= it. */
  touchedAt?: number;
}

export interface PaymentRecord extends Timeline {
  reference: string;
  amount: number;
  descriptionJson: string;
  type: string;
  phone: string | null;
  code: string | null;
  extraDataJson: string;
  organizationId: string;
  apiKeyId: string;
}

export interface TransferRecord extends Timeline {
  reference: string;
  amount: number;
  nameJson: string;
  phone: string;
  code: string;
}

/** 0: created, 1: PENDING, 2: final. The last step at or before `now`. */
export function stepAt(r: Timeline, now: number): 0 | 1 | 2 {
  if (now >= r.finalAt) return 2;
  return now >= r.pendingAt ? 1 : 0;
}

export function stepTime(r: Timeline, step: 0 | 1 | 2): number {
  return step === 2 ? r.finalAt : step === 1 ? r.pendingAt : r.createdAt;
}

export function paymentStatusAt(r: Timeline, now: number): string {
  const step = stepAt(r, now);
  return step === 2 ? r.finalStatus : step === 1 ? 'PENDING' : 'INIT';
}

/** Transfers are PENDING from creation until their final status. */
export function transferStatusAt(r: Timeline, now: number): string {
  return now >= r.finalAt ? r.finalStatus : 'PENDING';
}

/** The served `updatedAt`: the trajectory's last step, or a later touch. */
function updatedAt(r: Timeline, stepMs: number): number {
  return r.touchedAt === undefined || r.touchedAt < stepMs ? stepMs : r.touchedAt;
}

/** Ids, references, phones, codes and key ids are plain ASCII by construction: no escaping needed. */
const str = (s: string | null): string => (s === null ? 'null' : `"${s}"`);

export function paymentJson(r: PaymentRecord, now: number): string {
  if (r.raw !== undefined) return r.raw;
  const step = stepAt(r, now);
  const status = step === 2 ? r.finalStatus : step === 1 ? 'PENDING' : 'INIT';
  return (
    `{"id":"${r.id}","reference":"${r.reference}","amount":${r.amount},` +
    `"description":${r.descriptionJson},"status":"${status}","transaction_type":"${r.type}",` +
    `"phone":${str(r.phone)},"service_mobile_code":${str(r.code)},"extra_data":${r.extraDataJson},` +
    `"createdAt":"${iso(r.createdAt)}","updatedAt":"${iso(updatedAt(r, stepTime(r, step)))}",` +
    `"organization_id":"${r.organizationId}","api_key_id":"${r.apiKeyId}"}`
  );
}

export function transferJson(r: TransferRecord, now: number): string {
  if (r.raw !== undefined) return r.raw;
  const final = now >= r.finalAt;
  return (
    `{"id":"${r.id}","reference":"${r.reference}","amount":${r.amount},"name":${r.nameJson},` +
    `"phone":"${r.phone}","service_mobile_code":"${r.code}",` +
    `"status":"${final ? r.finalStatus : 'PENDING'}","createdAt":"${iso(r.createdAt)}",` +
    `"updatedAt":"${iso(updatedAt(r, final ? r.finalAt : r.createdAt))}"}`
  );
}

/** Order by createdAt, then id (the interface's natural order; ids compare as strings). */
export function compareTimeline(a: Timeline, b: Timeline): number {
  if (a.createdAt !== b.createdAt) return a.createdAt - b.createdAt;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

export function serialize(stream: SimStream, r: Timeline, now: number): string {
  return stream === 'payments'
    ? paymentJson(r as PaymentRecord, now)
    : transferJson(r as TransferRecord, now);
}
