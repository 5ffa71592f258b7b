/** A row of reporting.sync_windows: what one read of a window or scan found (records, rejects, verdict). */
export interface SyncWindowRow {
  source: string;
  stream: 'payments' | 'transfers';
  windowStart: Date;
  windowEnd: Date;
  kind: 'live' | 'backfill' | 'revisit' | 'scan';
  fetchedAt: Date;
  records: number;
  rejects: number;
  reportedTotal: number | null;
  pages: number;
  outcome: 'complete' | 'incomplete' | 'failed';
  detail?: string | null;
}
