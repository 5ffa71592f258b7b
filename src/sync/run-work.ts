/**
 * The sync use cases with their bookkeeping, written once: a live tick of one stream (its success or error
 * recorded in the checkpoint store), and one backfill item (a payments window or a transfers full scan,
 * its state kept in the warehouse, through the port, when the backfill is recorded there). The BullMQ processor (jobs/) and
 * `sync --once` both call these; neither keeps books of its own.
 */
import { CircuitOpenError, describeError, PaysyncError, WindowIncompleteError } from '../errors.js';
import { pausePoint } from '../pause-point.js';
import type { UpstreamClient } from '../upstream/client.js';
import type { Stream } from '../upstream/schemas.js';
import { windowKey } from './checkpoints.js';
import { describeOpenCircuit, type Circuit, type CircuitState } from './circuit.js';
import { isOutage } from './window-reasons.js';
import type { SyncWarehouse } from './ports.js';
import type { TickDeps } from './context.js';
import { tickPayments, tickTransfers, type PaymentsTickReport } from './tick.js';
import type { TransfersResult } from './transfers-run.js';
import { runTransfers } from './transfers-run.js';
import { runPaymentsWindow } from './window-run.js';
import { scanItemKey, windowItemKey, type BackfillWork } from './work.js';

export type TickOutcome =
  | { stream: 'payments'; report: PaymentsTickReport }
  | { stream: 'transfers'; result: TransfersResult | null }
  | { stream: Stream; down: CircuitState };

/**
 * Why a tick that ran to its end did not succeed, or null when it did: every window it read complete.
 * A tick whose windows all failed for outage reasons (the service answering only 503, or not at all)
 * reports the first one's reason code (window-reasons.ts), so status can tell an outage; one that read
 * something, or failed otherwise, reports WINDOW_INCOMPLETE (the service answers; windows fall short).
 */
export function tickFailure(outcome: TickOutcome): { code: string; message: string } | null {
  if ('down' in outcome) return null; // the circuit's own books say why (its error was recorded)
  if (outcome.stream === 'transfers') {
    const r = outcome.result;
    if (!r || r.outcome === 'complete') return null;
    return { code: 'WINDOW_INCOMPLETE', message: `transfers read incomplete: ${r.detail ?? 'no detail'}` };
  }
  const all = [...outcome.report.windows, ...outcome.report.revisits];
  const bad = all.filter((w) => w.outcome !== 'complete');
  const first = bad[0];
  if (!first) return null;
  const outage = bad.length === all.length && bad.every((w) => isOutage(w.reasonCode));
  return {
    code: outage && first.reasonCode ? first.reasonCode : 'WINDOW_INCOMPLETE',
    message: `${bad.length} of ${all.length} windows not complete; ${first.window}: ${first.detail ?? ''}`,
  };
}

/**
 * One live tick of one stream. A tick that read every window complete records its success; one that ran
 * but left windows not complete records an error instead (so "last success" never moves while the service
 * answers nothing but errors) and returns; one that threw records its error and rethrows it. While the
 * source's circuit is open the tick sends the stream's probe when one is due and nothing else, and
 * returns `down`; when the probe is answered, the tick runs as usual. A circuit that opens during the
 * tick ends it the same way (its error recorded).
 */
export async function runTick(deps: TickDeps, stream: Stream): Promise<TickOutcome> {
  const source = deps.source.name;
  const down = await circuitTurn(deps.circuit, stream);
  if (down) {
    // the stream is not read: its books say why, as a failed tick's would (status shows the last error)
    const message = `not synced, the service is down: ${describeOpenCircuit(down)}`;
    await deps.checkpoints
      .recordError(source, stream, { message, code: 'CIRCUIT_OPEN' })
      .catch(() => undefined);
    return { stream, down };
  }
  try {
    const outcome: TickOutcome =
      stream === 'payments'
        ? { stream, report: await tickPayments(deps) }
        : { stream, result: await tickTransfers(deps) };
    const failure = tickFailure(outcome);
    if (failure) await deps.checkpoints.recordError(source, stream, failure);
    else await deps.checkpoints.recordSuccess(source, stream, new Date());
    return outcome;
  } catch (error) {
    const code = error instanceof PaysyncError ? error.code : 'ERROR';
    // The tick's own error is the one to report, even when Redis cannot take the record of it.
    await deps.checkpoints
      .recordError(source, stream, { message: describeError(error), code })
      .catch(() => undefined);
    if (error instanceof CircuitOpenError && deps.circuit) return { stream, down: await deps.circuit.read() };
    throw error;
  }
}

/**
 * The tick's turn at an open circuit: null when the tick may run (closed, or its probe was answered);
 * else the circuit as it stands (its probe failed, or none was due).
 */
async function circuitTurn(circuit: Circuit | undefined, stream: Stream): Promise<CircuitState | null> {
  if (!circuit) return null;
  const turn = await circuit.turn(stream);
  if (turn.kind === 'closed') return null;
  if (turn.kind === 'probe' && (await circuit.probe(stream))) return null;
  return circuit.read();
}

/** A short summary of a tick (the job's return value). */
export function summarizeTick(outcome: TickOutcome): unknown {
  if ('down' in outcome) return { down: describeOpenCircuit(outcome.down) };
  if (outcome.stream === 'transfers') return outcome.result;
  const all = [...outcome.report.windows, ...outcome.report.revisits];
  return {
    windows: outcome.report.windows.length,
    revisits: outcome.report.revisits.length,
    records: all.reduce((n, w) => n + w.records, 0),
    incomplete: all.filter((w) => w.outcome !== 'complete').length,
    checkpoint: outcome.report.checkpoint?.toISOString() ?? null,
  };
}

export interface ItemRun {
  records: number;
  rejects: number;
  pages: number;
  /** True when the item was not run: finished already, or its backfill cancelled. */
  skipped?: boolean;
}

export function itemKeyOf(work: BackfillWork): string {
  return work.stream === 'payments'
    ? windowItemKey(work.source, work.start, work.end)
    : scanItemKey(work.source);
}

/**
 * Pause points for the crash drills (src/pause-point.ts): `window:mid-read` and `scan:page-committed`
 * when a page after the first is requested (for a scan, the earlier pages are committed by then).
 */
function withPausePoints(client: UpstreamClient, work: BackfillWork): UpstreamClient {
  return {
    initializePayment: (body) => client.initializePayment(body), // not spread: the client may be a class
    listPayments: async (query) => {
      if (query.page > 0) await pausePoint('window:mid-read');
      return client.listPayments(query);
    },
    listTransfers: async (query) => {
      if (query.page > 0 && work.stream === 'transfers') await pausePoint('scan:page-committed');
      return client.listTransfers(query);
    },
  };
}

/**
 * Runs one backfill item to a verdict. Its rows are committed and the sync log written before the item is
 * marked done, so a crash anywhere in between leaves the item running in PostgreSQL and it is run again
 * (upserts make the replay harmless). An incomplete window throws WindowIncompleteError (retried).
 */
export async function runBackfillItem(deps: TickDeps, work: BackfillWork): Promise<ItemRun> {
  const key = itemKeyOf(work);
  if (work.backfillId !== undefined && !(await deps.warehouse.startBackfillItem(work.backfillId, key)))
    return { records: 0, rejects: 0, pages: 0, skipped: true };
  const ctx = { ...deps, client: withPausePoints(deps.client, work) };
  const run = work.stream === 'payments' ? await runWindow(ctx, work) : await runScan(ctx);
  await pausePoint(`${work.stream === 'payments' ? 'window' : 'scan'}:before-verdict`);
  if (work.backfillId !== undefined)
    await deps.warehouse.finishBackfillItem(work.backfillId, key, {
      state: 'done',
      records: run.records,
      detail: null,
    });
  return run;
}

/** Records an item's failure (what retrying cannot fix, or its retries spent) with why. */
export async function backfillItemFailed(
  warehouse: SyncWarehouse,
  work: BackfillWork,
  error: unknown,
): Promise<void> {
  if (work.backfillId === undefined) return;
  await warehouse.finishBackfillItem(work.backfillId, itemKeyOf(work), {
    state: 'failed',
    records: null,
    detail: describeError(error),
  });
}

async function runWindow(
  deps: TickDeps,
  work: Extract<BackfillWork, { stream: 'payments' }>,
): Promise<ItemRun> {
  const window = { start: new Date(work.start), end: new Date(work.end) };
  const key = windowKey(window.start, window.end);
  await deps.checkpoints.markWindowOpen(work.source, 'payments', key);
  try {
    const result = await runPaymentsWindow(deps, window, 'backfill');
    if (result.outcome !== 'complete')
      throw new WindowIncompleteError(`window ${key} incomplete: ${result.detail}`);
    return { records: result.records, rejects: result.rejects, pages: result.pages };
  } finally {
    await deps.checkpoints.markWindowClosed(work.source, 'payments', key);
  }
}

async function runScan(deps: TickDeps): Promise<ItemRun> {
  const organizationId = await deps.warehouse.organisationOf(deps.source.name); // the interface gives transfers none
  const result = await runTransfers(deps, { mode: 'full', stopBefore: null, organizationId });
  if (result.outcome !== 'complete')
    throw new WindowIncompleteError(`transfers scan incomplete: ${result.detail}`);
  return { records: result.records, rejects: result.rejects, pages: result.pages };
}
