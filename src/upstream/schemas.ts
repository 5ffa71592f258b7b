/**
 * The interface's resources as zod schemas: the single source of their shapes (types are inferred here,
 * never written twice). Field names, types and documented values follow the service's interface
 * (docs/upstream.md).
 *
 * What the schemas deliberately do:
 * - `amount` is a JSON number in the interface; it leaves the schema as an exact decimal string
 *   (see exact-json.ts), the only form money takes inside paysync.
 * - Payment `status` and `transaction_type` must be one of the documented values: anything else is
 *   quarantined as a reject (and lands later if the schema learns the value). Transfer statuses are
 *   not documented, so any non-empty string is accepted.
 * - Timestamps must be ISO 8601 with a zone (`Z` or an offset); they are kept as the text the service sent.
 * - Fields the interface does not list are kept, as parsed (numbers' text exact), on the record's
 *   `unknownFields` (validateItems): the service may grow fields without breaking sync or losing them.
 * - What the schema cannot say (depth, duplicate keys, PostgreSQL's ranges) is checked around it in
 *   validateItems, so that every record reaching the loader can be stored.
 */
import { z } from 'zod';
import { decimalText, isLosslessNumber, LosslessNumber } from './exact-json.js';
import { rawRecordProblem, withinLimits } from './record-limits.js';
import { MAX_KEY_BYTES, storableProblem } from './storable.js';
import { driftOf, shapeOf, unknownFieldsOf, type FieldDrift, type RecordShape } from './record-shape.js';

export const PAYMENT_STATUSES = ['INIT', 'PENDING', 'COMPLETE', 'FAILED', 'TIMEOUT'] as const;
export const TRANSACTION_TYPES = ['PAYMENT', 'DIRECT_PAYMENT', 'TRANSFERT', 'RECHARGE'] as const;
/** Statuses after which a payment no longer changes (everything else is revisited). */
export const FINAL_PAYMENT_STATUSES: readonly string[] = ['COMPLETE', 'FAILED', 'TIMEOUT'];
/** Transfer statuses are not documented; these are the ones seen as final in samples. */
export const FINAL_TRANSFER_STATUSES: readonly string[] = ['COMPLETE', 'FAILED'];

/** Longest text field accepted; the interface gives no bound, this only stops absurd payloads. */
export const MAX_TEXT_LENGTH = 10_000;

const text = z.string().max(MAX_TEXT_LENGTH);
const id = z.string().min(1).max(MAX_TEXT_LENGTH);
const timestamp = z.iso.datetime({ offset: true });

/** A JSON number (or its exact lossless form) → its exact decimal text. */
export const amount = z
  .union([z.number().finite(), z.custom<LosslessNumber>(isLosslessNumber, 'Invalid number')])
  .transform((n) => decimalText(n))
  .refine((s) => /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/.test(s), 'amount is not a finite decimal');

const jsonObject = z.record(z.string(), z.unknown());

export const PaymentSchema = z.object({
  id,
  reference: text,
  amount,
  description: text,
  status: z.enum(PAYMENT_STATUSES),
  transaction_type: z.enum(TRANSACTION_TYPES),
  phone: text.nullable(),
  service_mobile_code: text.nullable(),
  extra_data: jsonObject,
  createdAt: timestamp,
  updatedAt: timestamp,
  organization_id: text,
  api_key_id: text,
});
/**
 * The fields of a record the interface does not list, as the JSON text of an object (numbers with the
 * digits sent; record-shape.ts): absent when the record has none, which is the common case.
 */
export interface UnknownFields {
  unknownFields?: string;
}

export type Payment = z.output<typeof PaymentSchema> & UnknownFields;
export type PaymentInput = z.input<typeof PaymentSchema>;

export const TransferSchema = z.object({
  id,
  reference: text,
  amount,
  name: text,
  phone: text,
  service_mobile_code: text,
  status: z.string().min(1).max(64),
  createdAt: timestamp,
  updatedAt: timestamp,
});
export type Transfer = z.output<typeof TransferSchema> & UnknownFields;
export type TransferInput = z.input<typeof TransferSchema>;

/** The page wrapper. `data` is checked only as an array here: its items are validated one by one. */
export const PageWrapperSchema = z.object({
  data: z.array(z.unknown()),
  total: z.number().int().nonnegative(),
  page: z.number().int().nonnegative(),
  size: z.number().int().nonnegative(),
  totalPages: z.number().int().nonnegative(),
});
export type PageWrapper = z.output<typeof PageWrapperSchema>;

export const InitializedPaymentSchema = z.object({
  amount,
  payment_status: z.string(),
  currency: z.string(),
  when_created: timestamp,
  launch_url: z.string().url(),
  reference: z.string().min(1),
});
export type InitializedPayment = z.output<typeof InitializedPaymentSchema>;

export const InitializePaymentBodySchema = z.object({
  amount: z.number(),
  description: z.string(),
  extra_data: jsonObject.optional(),
});
export type InitializePaymentBody = z.input<typeof InitializePaymentBodySchema>;

export const ErrorBodySchema = z.object({
  statusCode: z.number().int(),
  message: z.union([z.string(), z.array(z.string())]),
  error: z.string(),
});
export type ErrorBody = z.output<typeof ErrorBodySchema>;

export type Stream = 'payments' | 'transfers';
export const STREAMS: readonly Stream[] = ['payments', 'transfers'];

/** A record the service sent that failed validation, with the reason; quarantined, never dropped. */
export interface RejectedRecord {
  raw: unknown;
  reason: string;
  /** The record's id when it had a usable one (lets a later valid copy resolve the reject). */
  id: string | null;
  /** Listed fields it lacked or sent with another JSON type: the service's records changed shape. */
  drift?: FieldDrift[];
}

export interface ValidatedItems<T> {
  valid: T[];
  rejects: RejectedRecord[];
}

function reasonOf(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length ? issue.path.join('.') : '(record)'}: ${issue.message}`)
    .join('; ');
}

function idOf(raw: unknown): string | null {
  if (raw === null || typeof raw !== 'object') return null;
  const value = (raw as { id?: unknown }).id;
  // an id too long for the rejects' index is kept in the raw copy only
  return typeof value === 'string' && value.length > 0 && Buffer.byteLength(value) <= MAX_KEY_BYTES
    ? value
    : null;
}

/**
 * Validates each item on its own: one bad record never fails its page. Three checks, in turn: the raw
 * record's limits (record-limits.ts: depth, size, duplicate keys, text PostgreSQL cannot hold), the
 * schema, then what the columns can take (`storable`, storable.ts). Whatever passes all three can be
 * written; everything else is a reject with its reason. With the schema's `shape`, a valid record's
 * fields the interface does not list are kept on it as `unknownFields`, and a refused record's listed
 * fields that are absent or of another JSON type are named on its reject (`drift`).
 */
export function validateItems<S extends z.ZodType>(
  schema: S,
  items: readonly unknown[],
  storable: (record: z.output<S>) => string | null = () => null,
  shape?: RecordShape,
): ValidatedItems<z.output<S> & UnknownFields> {
  const valid: (z.output<S> & UnknownFields)[] = [];
  const rejects: RejectedRecord[] = [];
  for (const raw of items) {
    const limit = withinLimits(raw) ? null : rawRecordProblem(raw);
    if (limit) {
      rejects.push({ raw, reason: limit.reason, id: idOf(raw) });
      continue;
    }
    const result = schema.safeParse(raw);
    if (!result.success) {
      const reject: RejectedRecord = { raw, reason: reasonOf(result.error), id: idOf(raw) };
      const fields = result.error.issues.flatMap((i) => (typeof i.path[0] === 'string' ? [i.path[0]] : []));
      const drift = shape ? driftOf(raw, fields, shape) : [];
      if (drift.length > 0) reject.drift = drift;
      rejects.push(reject);
      continue;
    }
    const problem = storable(result.data);
    if (problem !== null) {
      rejects.push({ raw, reason: problem, id: idOf(raw) });
      continue;
    }
    const record = result.data as z.output<S> & UnknownFields;
    const unknown = shape ? unknownFieldsOf(raw as Record<string, unknown>, shape.known) : undefined;
    if (unknown) record.unknownFields = unknown;
    valid.push(record);
  }
  return { valid, rejects };
}

const paymentStorable = (p: Payment): string | null =>
  storableProblem({
    amount: p.amount,
    createdAt: p.createdAt,
    updatedAt: p.updatedAt,
    keys: { id: p.id, reference: p.reference, organization_id: p.organization_id, api_key_id: p.api_key_id },
  });

const transferStorable = (t: Transfer): string | null =>
  storableProblem({
    amount: t.amount,
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
    keys: { id: t.id, reference: t.reference },
  });

/**
 * The record schemas as zod 4 compiles them (`z.compile`): a generated function checks and builds the
 * output in one go, and any record it does not accept is handed to the ordinary parser, so a reject's
 * reason is word for word what the schema says (test/upstream/parse-equivalence.test.ts compares both on
 * hostile records). zod's own compiler rather than a hand-written check: one source of the shapes, kept by
 * zod. Compiled because the schema pass is a visible share (about 6%) of a backfill's worker CPU when run
 * uncompiled.
 */
const CompiledPaymentSchema = z.compile(PaymentSchema);
const CompiledTransferSchema = z.compile(TransferSchema);

/** The fields the interface lists per stream, and their JSON types (record-shape.ts). */
export const PAYMENT_SHAPE: RecordShape = shapeOf(PaymentSchema);
export const TRANSFER_SHAPE: RecordShape = shapeOf(TransferSchema);

/**
 * A check of a record's times against the worker's clock (the sync core's `impossibleTime`): a record
 * it names a problem for is a reject with that reason, kept raw like any other.
 */
export type TimeCheck = (times: { createdAt: string; updatedAt: string }) => string | null;

export const validatePayments = (items: readonly unknown[], times?: TimeCheck): ValidatedItems<Payment> =>
  validateItems(
    CompiledPaymentSchema,
    items,
    times ? (p) => paymentStorable(p) ?? times(p) : paymentStorable,
    PAYMENT_SHAPE,
  );
export const validateTransfers = (items: readonly unknown[], times?: TimeCheck): ValidatedItems<Transfer> =>
  validateItems(
    CompiledTransferSchema,
    items,
    times ? (t) => transferStorable(t) ?? times(t) : transferStorable,
    TRANSFER_SHAPE,
  );
