/**
 * What each stream's table looks like to the loader: its content columns (in the order values are
 * sent), their Postgres types, and how a validated record becomes one row of text values. Column names
 * here are constants of the schema in sql/001, never data.
 */
import {
  FINAL_PAYMENT_STATUSES,
  FINAL_TRANSFER_STATUSES,
  type Payment,
  type Stream,
  type Transfer,
} from '../upstream/schemas.js';
import { toExactJson } from '../upstream/exact-json.js';

export interface Column {
  name: string;
  /** `json` keeps its text exactly (and is compared as text: json has no equality operator). */
  type: 'text' | 'numeric' | 'jsonb' | 'json' | 'timestamptz';
  /** Part of "is this copy different?" at equal updated_at. The id and provenance columns are not. */
  compared: boolean;
}

export interface StreamTable {
  stream: Stream;
  table: string;
  /** The analysts' view: one row per status seen (sql/016). */
  historyTable: string;
  /** Where statuses after a record's first one are written (its first one is on its own row). */
  changesTable: string;
  historyKey: string;
  finalStatuses: readonly string[];
  columns: readonly Column[];
}

/** A record as column values, in `columns` order; null is SQL NULL. */
export type Row = (string | null)[];

const col = (name: string, type: Column['type'] = 'text', compared = true): Column => ({
  name,
  type,
  compared,
});

export const PAYMENTS: StreamTable = {
  stream: 'payments',
  table: 'reporting.payments',
  historyTable: 'reporting.payment_status_history',
  changesTable: 'reporting.payment_status_changes',
  historyKey: 'payment_id',
  finalStatuses: FINAL_PAYMENT_STATUSES,
  columns: [
    col('id', 'text', false),
    col('reference'),
    col('amount', 'numeric'),
    col('description'),
    col('status'),
    col('transaction_type'),
    col('phone'),
    col('service_mobile_code'),
    col('extra_data', 'jsonb'),
    col('created_at', 'timestamptz'),
    col('updated_at', 'timestamptz', false),
    col('organization_id'),
    col('api_key_id'),
    col('unknown_fields', 'json'),
  ],
};

export const TRANSFERS: StreamTable = {
  stream: 'transfers',
  table: 'reporting.transfers',
  historyTable: 'reporting.transfer_status_history',
  changesTable: 'reporting.transfer_status_changes',
  historyKey: 'transfer_id',
  finalStatuses: FINAL_TRANSFER_STATUSES,
  columns: [
    col('id', 'text', false),
    col('reference'),
    col('amount', 'numeric'),
    col('name'),
    col('phone'),
    col('service_mobile_code'),
    col('status'),
    col('created_at', 'timestamptz'),
    col('updated_at', 'timestamptz', false),
    // Comes from the source, not the record: a second source reading the same transfer is no change.
    col('organization_id', 'text', false),
    col('unknown_fields', 'json'),
  ],
};

export const tableFor = (stream: Stream): StreamTable => (stream === 'payments' ? PAYMENTS : TRANSFERS);

/**
 * The fields a record carries that the interface does not list, as JSON text with every number's text
 * as sent; null (SQL NULL) when it has none.
 */
const unknownFieldsText = (record: Payment | Transfer): string | null => record.unknownFields ?? null;

/** Index of the jsonb column in a row (checked apart: JSONB refuses some escapes text accepts). */
export const jsonColumnIndex = (table: StreamTable): number =>
  table.columns.findIndex((c) => c.type === 'jsonb');

/** Index of the `json` column in a row, unknown_fields (its JSON text is written by record-shape.ts). */
export const unknownFieldsIndex = (table: StreamTable): number =>
  table.columns.findIndex((c) => c.type === 'json');

export function paymentRow(p: Payment): Row {
  return [
    p.id,
    p.reference,
    p.amount,
    p.description,
    p.status,
    p.transaction_type,
    p.phone,
    p.service_mobile_code,
    toExactJson(p.extra_data),
    p.createdAt,
    p.updatedAt,
    p.organization_id,
    p.api_key_id,
    unknownFieldsText(p),
  ];
}

export function transferRow(t: Transfer, organizationId: string | null): Row {
  return [
    t.id,
    t.reference,
    t.amount,
    t.name,
    t.phone,
    t.service_mobile_code,
    t.status,
    t.createdAt,
    t.updatedAt,
    organizationId,
    unknownFieldsText(t),
  ];
}
