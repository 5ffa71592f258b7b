/** One row of a reconcile: per source, stream and status, the service's figure beside the warehouse's. */
export interface Tally {
  count: number;
  /** Exact sum of amounts, or null when that side gives none (a wrapper total carries no amounts). */
  amount: string | null;
}

export interface ReconcileRow {
  source: string;
  stream: 'payments' | 'transfers';
  status: string;
  service: number;
  warehouse: number;
  difference: number;
  quarantined: number;
  unexplained: number;
  /** The service's exact sum (quarantined records left out), or null: then amounts are not compared. */
  serviceAmount: string | null;
  warehouseAmount: string | null;
  /** How the service's number was obtained: `wrapper-total`, `paged`, `paged-confirm`. */
  method: string;
}
