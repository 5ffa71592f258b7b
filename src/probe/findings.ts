/**
 * What a probe found out about the interface's open points, as data (zod is the single source of the
 * shape, so a stored copy is read back through the same schema). Every finding can be "unknown" (`null`
 * or `'unknown'`): a probe says so rather than guess when the service gave too little evidence.
 *
 * `describeFindings` turns a Findings into one line per open point; both the printed table and the
 * change detection read it, so what is shown and what is compared are the same thing.
 */
import { z } from 'zod';

const OrderSchema = z.enum(['asc', 'desc', 'unordered', 'unknown']);
export type ListOrder = z.infer<typeof OrderSchema>;

export const FindingsSchema = z.object({
  /** Open point "which of the two list shapes": every shape seen across the probe's requests. */
  listShape: z.enum(['array', 'wrapper', 'mixed']),
  /** Open point "default values of page and size": items served when `size` is absent (null: unknown). */
  defaultPageSize: z.number().int().positive().nullable(),
  /** Open point "maximum page size": the size a larger `size` was silently cut to (null: no cap seen). */
  maxPageSize: z.number().int().positive().nullable(),
  /** The largest `size` the service was seen to serve in full (null: never verified, e.g. few records). */
  pageSizeServed: z.number().int().positive().nullable(),
  /** Open point "are dateFrom/dateTo inclusive", on a record created on an exact second (null: unknown). */
  dateFromInclusive: z.boolean().nullable(),
  dateToInclusive: z.boolean().nullable(),
  /** Whether the payment lists filter on dateFrom/dateTo at all (null: unknown). */
  paymentsHonourDates: z.boolean().nullable(),
  /** Whether the payment lists filter on `status` (null: unknown; absent from findings stored before it). */
  paymentsHonourStatus: z.boolean().nullable().default(null),
  /** Open point "ordering of listed items", by createdAt. */
  paymentOrder: OrderSchema,
  transferOrder: OrderSchema,
  /** The transfer list documents no filters; does it filter on dateFrom/dateTo anyway (null: unknown)? */
  transfersHonourDates: z.boolean().nullable(),
  /** Whether `page` moves through the list (false: every page is page 0; null: unknown). */
  honoursPage: z.boolean().nullable(),
  probedAt: z.string(),
  requests: z.number().int().nonnegative(),
});

export type Findings = z.infer<typeof FindingsSchema>;

/** One open point as shown and compared; `value` null means unknown. */
export interface FindingLine {
  key: string;
  label: string;
  value: string | null;
  /** false: shown only (it follows how many records exist, not how the service behaves). */
  compared: boolean;
}

const flag = (v: boolean | null, yes: string, no: string): string | null =>
  v === null ? null : v ? yes : no;

const order = (v: ListOrder): string | null => (v === 'unknown' ? null : v);

/** The cap as one value: a number, "none" (a full page was served beyond any cap), or unknown. */
function capValue(f: Findings): string | null {
  if (f.maxPageSize !== null) return String(f.maxPageSize);
  return f.pageSizeServed !== null ? 'none' : null;
}

export function describeFindings(f: Findings): FindingLine[] {
  const line = (key: string, label: string, value: string | null, compared = true): FindingLine => ({
    key,
    label,
    value,
    compared,
  });
  return [
    line('listShape', 'list shape', f.listShape),
    line('defaultPageSize', 'default page size', f.defaultPageSize?.toString() ?? null),
    line('maxPageSize', 'max page size', capValue(f)),
    line('pageSizeServed', 'largest page served in full', f.pageSizeServed?.toString() ?? null, false),
    line('dateFromInclusive', 'dateFrom bound', flag(f.dateFromInclusive, 'inclusive', 'exclusive')),
    line('dateToInclusive', 'dateTo bound', flag(f.dateToInclusive, 'inclusive', 'exclusive')),
    line('paymentsHonourDates', 'payments filter on dates', flag(f.paymentsHonourDates, 'yes', 'no')),
    line('paymentsHonourStatus', 'payments filter on status', flag(f.paymentsHonourStatus, 'yes', 'no')),
    line('paymentOrder', 'payment order', order(f.paymentOrder)),
    line('transferOrder', 'transfer order', order(f.transferOrder)),
    line('transfersHonourDates', 'transfers filter on dates', flag(f.transfersHonourDates, 'yes', 'no')),
    line('honoursPage', 'page parameter honoured', flag(f.honoursPage, 'yes', 'no')),
  ];
}

/** A stored copy read back; anything unreadable (an older format) counts as no previous probe. */
export function parseStoredFindings(value: unknown): Findings | null {
  const parsed = FindingsSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}
