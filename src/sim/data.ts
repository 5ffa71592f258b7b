/**
 * Seeded generation of an organisation's history: `days` of past records ending at the simulated now,
 * plus `FUTURE_DAYS` of records not visible yet (advancing the clock makes them appear). Times are drawn
 * first and sorted, then records are built in order, so ids (ObjectId-like: creation second, org tag,
 * counter) follow the (createdAt, id) order by construction and no object sort is needed.
 */
import { DESCRIPTION_JSON, EXTRA_DATA_JSON, NAME_JSON, OPERATORS, amountOf, phoneOf } from './pools.js';
import { type Rng, hashString, mix32, mulberry32, pick } from './prng.js';
import type { PaymentRecord, TransferRecord } from './records.js';

export const DAY_MS = 86_400_000;
export const FUTURE_DAYS = 2;
export const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;

export interface OrgPlan {
  seed: number;
  orgIndex: number;
  organizationId: string;
  /** Key ids generated payments are attributed to; the first one gets most of them. */
  creatorIds: readonly string[];
  now: number;
  days: number;
  perDay: number;
  transfersPerDay: number;
}

export function objectId(seconds: number, orgTag: string, counter: number): string {
  const ts = Math.max(0, Math.floor(seconds)).toString(16).padStart(8, '0');
  return ts + orgTag + counter.toString(16).padStart(10, '0');
}

export function orgTagOf(organizationId: string): string {
  return (hashString(organizationId) & 0xffffff).toString(16).padStart(6, '0');
}

/**
 * Sorted creation times over [now - days, now + FUTURE_DAYS): about 1% exactly on a UTC midnight, 20%
 * on a whole second, the rest with milliseconds — the edges that date-bound handling gets wrong.
 */
function creationTimes(rng: Rng, plan: OrgPlan, perDay: number): Float64Array {
  const start = plan.now - plan.days * DAY_MS;
  const span = (plan.days + FUTURE_DAYS) * DAY_MS;
  const times = new Float64Array(Math.round(perDay * (plan.days + FUTURE_DAYS)));
  const firstMidnight = Math.ceil(start / DAY_MS) * DAY_MS;
  const midnights = Math.max(1, Math.floor((start + span - firstMidnight) / DAY_MS));
  for (let i = 0; i < times.length; i++) {
    const kind = rng();
    const t = start + Math.floor(rng() * span);
    if (kind < 0.01) times[i] = firstMidnight + Math.floor(rng() * midnights) * DAY_MS;
    else if (kind < 0.21) times[i] = Math.floor(t / SECOND) * SECOND;
    else times[i] = t;
  }
  return times.sort();
}

/** A payment's trajectory: most settle within minutes, some days later, a few never leave INIT/PENDING. */
export function paymentTrajectory(rng: Rng, createdAt: number): [number, number, string] {
  const r = rng();
  const pendingAt = createdAt + 2 * SECOND + Math.floor(rng() * 10 * MINUTE);
  const final = rng() < 0.78 ? 'COMPLETE' : rng() < 0.75 ? 'FAILED' : 'TIMEOUT';
  if (r < 0.05) return [Infinity, Infinity, 'INIT'];
  if (r < 0.09) return [Infinity, createdAt + 15 * MINUTE + Math.floor(rng() * HOUR), 'TIMEOUT'];
  if (r < 0.11) return [pendingAt, Infinity, 'PENDING'];
  if (r < 0.21) return [pendingAt, pendingAt + DAY_MS + Math.floor(rng() * 4 * DAY_MS), final];
  return [pendingAt, pendingAt + 10 * SECOND + Math.floor(rng() * 2 * HOUR), final];
}

function pickCreator(rng: Rng, ids: readonly string[]): string {
  return rng() < 0.6 || ids.length === 1 ? (ids[0] as string) : pick(rng, ids.slice(1));
}

const TYPES = ['PAYMENT', 'DIRECT_PAYMENT', 'TRANSFERT', 'RECHARGE'];
const TYPE_WEIGHTS = [0.4, 0.75, 0.85, 1];

function typeOf(rng: Rng): string {
  const r = rng();
  return TYPES[TYPE_WEIGHTS.findIndex((w) => r < w)] as string;
}

export interface PaymentIdentity {
  id: string;
  reference: string;
  createdAt: number;
  organizationId: string;
  apiKeyId: string;
  shuffleKey: number;
}

/** Draws a payment's type, operator, amount, texts and trajectory onto `r` (its identity is already set). */
function fillPayment(rng: Rng, r: PaymentRecord): PaymentRecord {
  r.type = typeOf(rng);
  const operator = r.type === 'PAYMENT' ? null : pick(rng, OPERATORS);
  [r.pendingAt, r.finalAt, r.finalStatus] = paymentTrajectory(rng, r.createdAt);
  r.amount = amountOf(rng);
  r.descriptionJson = pick(rng, DESCRIPTION_JSON);
  r.phone = operator ? phoneOf(rng, operator) : null;
  r.code = operator ? operator.code : null;
  r.extraDataJson = pick(rng, EXTRA_DATA_JSON);
  return r;
}

/** A random payment of any type with the given identity (drift and initialize). */
export function randomPayment(rng: Rng, who: PaymentIdentity): PaymentRecord {
  const blank = { amount: 0, descriptionJson: '', type: '', phone: null, code: null, extraDataJson: '' };
  return fillPayment(rng, { ...who, ...blank, pendingAt: 0, finalAt: 0, finalStatus: '' });
}

/**
 * A generated payment. Its id and reference follow from (createdAt, org tag, sequence) and are computed
 * when read instead of stored: stored, those two strings would be about half of the allocation, and of
 * the GC time, of generating a million payments.
 */
class GeneratedPayment implements PaymentRecord {
  amount = 0;
  descriptionJson = '';
  type = '';
  phone: string | null = null;
  code: string | null = null;
  extraDataJson = '';
  pendingAt = 0;
  finalAt = 0;
  finalStatus = '';
  constructor(
    readonly createdAt: number,
    readonly seq: number,
    readonly tag: string,
    readonly organizationId: string,
    readonly apiKeyId: string,
    readonly shuffleKey: number,
  ) {}

  get id(): string {
    return objectId(this.createdAt / SECOND, this.tag, this.seq);
  }

  get reference(): string {
    return `PAY-${this.tag.toUpperCase()}${this.seq.toString(36).toUpperCase().padStart(7, '0')}`;
  }
}

export function generatePayments(plan: OrgPlan): PaymentRecord[] {
  const rng = mulberry32(mix32(plan.seed, plan.orgIndex, 0x70617973));
  const times = creationTimes(rng, plan, plan.perDay);
  const tag = orgTagOf(plan.organizationId);
  const out: PaymentRecord[] = new Array(times.length);
  for (let i = 0; i < times.length; i++) {
    const creator = pickCreator(rng, plan.creatorIds);
    const shuffleKey = mix32(plan.seed, plan.orgIndex, i);
    const record = new GeneratedPayment(times[i] as number, i, tag, plan.organizationId, creator, shuffleKey);
    out[i] = fillPayment(rng, record);
  }
  return out;
}

/** Transfers start PENDING; most settle within an hour, some days later. */
export function transferTrajectory(rng: Rng, createdAt: number): [number, string] {
  const late = rng() < 0.05;
  const delay = late ? DAY_MS + Math.floor(rng() * 2 * DAY_MS) : 10 * SECOND + Math.floor(rng() * HOUR);
  return [createdAt + delay, rng() < 0.85 ? 'COMPLETE' : 'FAILED'];
}

/** A transfer with the given identity and settling time (late arrivals made while the simulator runs). */
export function newTransfer(
  rng: Rng,
  given: { id: string; reference: string; createdAt: number; finalAt: number; shuffleKey: number },
): TransferRecord {
  const operator = pick(rng, OPERATORS);
  return {
    ...given,
    amount: amountOf(rng),
    nameJson: pick(rng, NAME_JSON),
    phone: phoneOf(rng, operator),
    code: operator.code,
    pendingAt: Infinity,
    finalStatus: rng() < 0.85 ? 'COMPLETE' : 'FAILED',
  };
}

export function generateTransfers(plan: OrgPlan): TransferRecord[] {
  const rng = mulberry32(mix32(plan.seed, plan.orgIndex, 0x74726673));
  const times = creationTimes(rng, plan, plan.transfersPerDay);
  const tag = orgTagOf(plan.organizationId);
  const out: TransferRecord[] = new Array(times.length);
  for (let i = 0; i < times.length; i++) {
    const createdAt = times[i] as number;
    const operator = pick(rng, OPERATORS);
    const [finalAt, finalStatus] = transferTrajectory(rng, createdAt);
    out[i] = {
      id: objectId(createdAt / SECOND, tag, 0x1000000000 + i),
      reference: `TRF-${tag.toUpperCase()}${i.toString(36).toUpperCase().padStart(7, '0')}`,
      amount: amountOf(rng),
      nameJson: pick(rng, NAME_JSON),
      phone: phoneOf(rng, operator),
      code: operator.code,
      createdAt,
      pendingAt: Infinity,
      finalAt,
      finalStatus,
      shuffleKey: mix32(plan.seed, plan.orgIndex, 0x1000000 + i),
    };
  }
  return out;
}
