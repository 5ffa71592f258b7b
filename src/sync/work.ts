/**
 * The units of work a worker runs, as data: what each job name asks for. BullMQ's layer (jobs/) carries
 * these in Redis; the use cases of src/sync/ take them. Job data holds source names and windows, never
 * keys: the worker looks the source up in its own settings.
 */
import type { Stream } from '../upstream/schemas.js';

export interface TickWork {
  source: string;
  stream: Stream;
}

/** A payments window of a backfill. `backfillId` is set when the backfill is recorded in PostgreSQL. */
export interface WindowWork {
  source: string;
  stream: 'payments';
  /** Window bounds, epoch milliseconds. */
  start: number;
  end: number;
  kind: 'backfill';
  backfillId?: number;
  /** The W3C traceparent of the span that recorded the backfill (when traced): the job's span links to it. */
  trace?: string;
}

/** The transfers full scan of a backfill (transfers have no date filter). */
export interface ScanWork {
  source: string;
  stream: 'transfers';
  kind: 'backfill';
  backfillId?: number;
  trace?: string;
}

/** The daily pack: yesterday's, plus restatements of changed days in the horizon. */
export interface ExportWork {
  kind: 'daily-export';
}

/** A probe of a source's open points: at worker start and daily. */
export interface ProbeWork {
  source: string;
  kind: 'probe';
}

/** Job name → its data: the one place the shapes are tied to the names. */
export interface WorkByName {
  tick: TickWork;
  window: WindowWork;
  scan: ScanWork;
  export: ExportWork;
  probe: ProbeWork;
}

export type WorkName = keyof WorkByName;
export type BackfillWork = WindowWork | ScanWork;

/** A window's deterministic key: the same window of the same source always has the same key. */
export function windowItemKey(source: string, start: number, end: number): string {
  return `window|${source}|payments|${start}|${end}`;
}

export function scanItemKey(source: string): string {
  return `scan|${source}|transfers`;
}
