/**
 * The simulator's state without HTTP: data, clock, switches, keys, request log, and the operations the
 * routes perform (create a payment, drift, the truth). server.ts puts it behind node:http.
 */
import {
  DAY_MS,
  SECOND,
  generatePayments,
  generateTransfers,
  objectId,
  orgTagOf,
  newTransfer,
  randomPayment,
} from './data.js';
import { type ApiKey, type Directory, buildDirectory } from './keys.js';
import { malformedPayments, malformedTransfers } from './malformed.js';
import { hashString, mix32, mulberry32 } from './prng.js';
import { ListingCache } from './listing.js';
import { type PaymentRecord, type TransferRecord, serialize } from './records.js';
import { RequestLog, wallNow } from './request-log.js';
import { Store, type StreamName } from './store.js';
import type { SimOptions, SimPayment, SimSwitches, SimTransfer } from './types.js';
import { DEFAULT_SWITCHES } from './switches.js';
/** Counters of created payments start here, apart from generated ones (ids stay unique). */
const CREATED_COUNTER_BASE = 0x8000000000;

export class Simulator {
  readonly seed: number;
  readonly directory: Directory;
  readonly store = new Store();
  readonly listings = new ListingCache();
  readonly log = new RequestLog();
  private switchValues: SimSwitches;
  private readonly baseNow: number;
  private readonly startWall = Date.now();
  private advanced = 0;
  private readonly realClock: boolean;
  private created = 0;
  private readonly revoked = new Set<string>();

  constructor(options: SimOptions) {
    this.seed = options.seed ?? 1;
    this.baseNow = (options.now ?? new Date()).getTime();
    this.realClock = options.clock === 'real';
    this.switchValues = { ...DEFAULT_SWITCHES, ...options.switches };
    this.directory = buildDirectory(this.seed, options.organisations ?? 2, options.apiKeys ?? []);
    this.generate(options);
    this.log.outageSwitched(this.switchValues.outage, wallNow());
  }

  private generate(options: SimOptions): void {
    const days = options.days ?? 3;
    const perDay = options.perDay ?? 200;
    this.directory.organisations.forEach((organizationId, orgIndex) => {
      const creatorIds = this.directory.creatorIds.get(organizationId) ?? [];
      const plan = { seed: this.seed, orgIndex, organizationId, creatorIds, now: this.baseNow, days, perDay };
      const transfersPerDay = options.transfersPerDay ?? perDay / 4;
      this.store.payments.set(organizationId, generatePayments({ ...plan, transfersPerDay }));
      this.store.transfers.set(organizationId, generateTransfers({ ...plan, transfersPerDay }));
      const bad = { ...plan, apiKeyId: creatorIds[0] as string, count: options.malformed ?? 0 };
      const window = { from: this.baseNow - days * DAY_MS, to: this.baseNow };
      for (const r of malformedPayments({ ...bad, ...window }))
        this.store.insert('payments', organizationId, r);
      for (const r of malformedTransfers({ ...bad, ...window }))
        this.store.insert('transfers', organizationId, r);
    });
  }

  now(): number {
    // Whole milliseconds, as timestamps on the wire carry.
    return Math.floor(this.baseNow + this.advanced + (this.realClock ? Date.now() - this.startWall : 0));
  }

  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('advance: ms must be a finite number >= 0');
    this.advanced += ms;
  }

  switches(): Readonly<SimSwitches> {
    return this.switchValues;
  }

  setSwitches(partial: Partial<SimSwitches>): void {
    const before = this.switchValues;
    this.switchValues = { ...before, ...partial };
    this.log.outageSwitched(this.switchValues.outage, wallNow());
    this.fixTimestamps(before.timestampOverrides, this.switchValues.timestampOverrides);
  }

  /** A record whose timestamp override is removed was fixed by the service now: a newer `updatedAt`. */
  private fixTimestamps(before: SimSwitches['timestampOverrides'], after: SimSwitches['timestampOverrides']) {
    const now = this.now();
    for (const id of Object.keys(before)) {
      if (Object.hasOwn(after, id)) continue;
      const record = this.store.find(id);
      if (record) record.touchedAt = now;
    }
  }

  /** The key for a secret, or undefined when unknown or revoked. */
  authenticate(secret: string | undefined): ApiKey | undefined {
    if (secret === undefined || this.revoked.has(secret)) return undefined;
    return this.directory.bySecret.get(secret);
  }

  revokeKey(secret: string): void {
    this.revoked.add(secret);
  }

  /** Initialize: a PAYMENT in INIT at now, with its own seeded trajectory towards a final status. */
  createPayment(key: ApiKey, amount: number, description: string, extraData: object): PaymentRecord {
    const record = this.newPayment(key.organizationId, key.id, this.now());
    Object.assign(record, {
      amount,
      descriptionJson: JSON.stringify(description),
      extraDataJson: JSON.stringify(extraData),
      type: 'PAYMENT',
      phone: null,
      code: null,
    });
    this.store.insert('payments', key.organizationId, record);
    return record;
  }

  /** `driftPerPage`: new payments inside [fromMs, toMs] (clipped to now), as if made while paging. */
  drift(key: ApiKey, fromMs: number | undefined, toMs: number | undefined): void {
    const now = this.now();
    const hi = Math.min(toMs ?? now, now);
    const lo = Math.min(fromMs ?? now - 60 * SECOND, hi);
    for (let i = 0; i < this.switchValues.driftPerPage; i++) {
      const rng = mulberry32(mix32(this.seed, this.created, 0x64726966));
      // Strictly inside the window when it is wide enough, so bound inclusivity never hides a drift record.
      const createdAt = hi - lo >= 2 ? lo + 1 + Math.floor(rng() * (hi - lo - 1)) : hi;
      this.store.insert(
        'payments',
        key.organizationId,
        this.newPayment(key.organizationId, key.id, createdAt),
      );
    }
  }

  /** `transferDriftPerPage`: late transfers, created within the past day, as if they arrived while paging. */
  driftTransfers(organizationId: string): void {
    const now = this.now();
    for (let i = 0; i < this.switchValues.transferDriftPerPage; i++) {
      const rng = mulberry32(mix32(this.seed, this.created, 0x74647266));
      this.addTransfer(organizationId, now - 1 - Math.floor(rng() * DAY_MS));
    }
  }

  /** A payment that appears now with this `createdAt` (a late arrival when in the past), by the org's first key. */
  addPayment(organizationId: string, createdAt: number): PaymentRecord {
    const apiKeyId = this.directory.creatorIds.get(organizationId)?.[0];
    if (apiKeyId === undefined) throw new RangeError(`no organisation ${organizationId}`);
    const record = this.newPayment(organizationId, apiKeyId, createdAt);
    this.store.insert('payments', organizationId, record);
    return record;
  }

  /** A new transfer with this `createdAt`, settling within the hour after now. */
  addTransfer(organizationId: string, createdAt: number): TransferRecord {
    const n = this.created++;
    const tag = orgTagOf(organizationId);
    const rng = mulberry32(mix32(this.seed, n, 0x74726e66));
    const id = objectId(createdAt / SECOND, tag, CREATED_COUNTER_BASE + n);
    const record = newTransfer(rng, {
      id,
      reference: `TRF-${tag.toUpperCase()}N${n.toString(36).toUpperCase().padStart(6, '0')}`,
      createdAt,
      finalAt: this.now() + 10 * SECOND + Math.floor(rng() * 3600 * SECOND),
      shuffleKey: hashString(id),
    });
    this.store.insert('transfers', organizationId, record);
    return record;
  }

  private newPayment(organizationId: string, apiKeyId: string, createdAt: number): PaymentRecord {
    const n = this.created++;
    const tag = orgTagOf(organizationId);
    const rng = mulberry32(mix32(this.seed, n, 0x696e6974));
    const id = objectId(createdAt / SECOND, tag, CREATED_COUNTER_BASE + n);
    const reference = `PAY-${tag.toUpperCase()}N${n.toString(36).toUpperCase().padStart(6, '0')}`;
    return randomPayment(rng, {
      id,
      reference,
      createdAt,
      organizationId,
      apiKeyId,
      shuffleKey: hashString(id),
    });
  }

  payments(organizationId: string): SimPayment[] {
    return this.truth('payments', organizationId) as SimPayment[];
  }

  transfers(organizationId: string): SimTransfer[] {
    return this.truth('transfers', organizationId) as SimTransfer[];
  }

  /** How many valid records of a stream are visible now (cheap: no serialisation). */
  count(stream: StreamName, organizationId: string): number {
    const now = this.now();
    let n = 0;
    for (const r of this.store.list(stream, organizationId)) {
      if (r.createdAt > now) break;
      if (r.raw === undefined) n++;
    }
    return n;
  }

  private truth(stream: StreamName, organizationId: string): unknown[] {
    const now = this.now();
    const out: unknown[] = [];
    for (const r of this.store.list(stream, organizationId)) {
      if (r.createdAt > now) break;
      if (r.raw === undefined) out.push(JSON.parse(serialize(stream, r, now)));
    }
    return out;
  }
}
