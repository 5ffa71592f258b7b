/**
 * The transfers promise, end to end on real HTTP, PostgreSQL and Redis: after every tick, every transfer
 * the service listed before the tick began is in the warehouse with the status the service showed,
 * whatever order the service lists them in; and each order costs what it can (a tail read for
 * oldest-first, an early stop for newest-first, a full scan when the order is unknown).
 */
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from '@jest/globals';
import type { SimSwitches } from '../../src/sim/types.js';
import { tickPayments, tickTransfers } from '../../src/sync/tick.js';
import { runTransfers } from '../../src/sync/transfers-run.js';
import { startHarness, transferDifferences, type Harness } from '../helpers/sync-harness.js';

let h: Harness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

const MINUTE = 60_000;

/** What `paysync sync --once` does for one source: payments, then transfers. */
async function syncOnce(harness: Harness) {
  const deps = harness.runtime.syncContext(harness.settings.sources[0]!);
  await tickPayments(deps);
  return tickTransfers(deps);
}

async function transferRequests(harness: Harness, since: number): Promise<number> {
  return harness.sim
    .requestLog()
    .slice(since)
    .filter((r) => r.path.startsWith('/api/transferts')).length;
}

type Order = SimSwitches['transferOrder'];
const ORDERS: Array<[string, Order, SimSwitches['shape'], string]> = [
  ['oldest-first, page wrapper', 'asc', 'wrapper', 'tail'],
  ['oldest-first, bare arrays', 'asc', 'array', 'tail'],
  ['newest-first, page wrapper', 'desc', 'wrapper', 'newest-first'],
  ['newest-first, bare arrays capped at 10', 'desc', 'array', 'newest-first'],
  ['unknown order, page wrapper', 'unordered', 'wrapper', 'full'],
  ['unknown order, alternating shapes', 'unordered', 'alternate', 'full'],
];

describe('transfers are current after every tick, in every order', () => {
  it.each(ORDERS)('%s', async (_label, transferOrder, shape, expectedMode) => {
    const pageCap = _label.includes('capped') ? 10 : null;
    h = await startHarness({
      name: `tr-${transferOrder}-${shape}`,
      sim: { days: 4, perDay: 40, transfersPerDay: 120, switches: { transferOrder, shape, pageCap } },
      env: { TRANSFERS_FULL_SCAN_EVERY: '1d' },
    });
    const first = await syncOnce(h);
    expect(first?.outcome).toBe('complete');
    expect(first?.mode).toBe('full');
    expect(await transferDifferences(h)).toEqual([]);
    const fullPages = first!.pages;

    for (const step of [20 * MINUTE, 45 * MINUTE, 3 * 60 * MINUTE]) {
      // between two ticks: new transfers appear at the service and pending ones settle
      const before = new Map(h.sim.transfers(h.org).map((t) => [t.id, t.status]));
      h.sim.advance(step);
      const after = h.sim.transfers(h.org);
      expect(after.length).toBeGreaterThan(before.size);
      expect(after.filter((t) => before.has(t.id) && before.get(t.id) !== t.status).length).toBeGreaterThan(
        0,
      );
      const since = h.sim.requestLog().length;
      const result = await syncOnce(h);
      expect(result?.outcome).toBe('complete');
      expect(await transferDifferences(h)).toEqual([]);
      expect(result?.mode).toBe(expectedMode);
      expect(result?.fellBack).toBeNull();
      if (expectedMode !== 'full') expect(result!.pages).toBeLessThan(fullPages);
      expect(await transferRequests(h, since)).toBe(result!.pages);
    }
  });
});

describe('an oldest-first tail read proves it lost nothing, or scans in full in the same tick', () => {
  async function oldestFirst(name: string) {
    const harness = await startHarness({
      name,
      sim: { days: 4, perDay: 40, transfersPerDay: 120, switches: { transferOrder: 'asc' } },
      env: { TRANSFERS_FULL_SCAN_EVERY: '1d' },
    });
    expect((await syncOnce(harness))?.mode).toBe('full');
    harness.sim.advance(20 * MINUTE);
    expect((await syncOnce(harness))?.mode).toBe('tail');
    return harness;
  }

  it('a transfer that appears late, before the tail, is caught by a full scan in the same tick', async () => {
    h = await oldestFirst('tr-late');
    const late = h.sim.addTransfer(h.org, new Date(h.sim.now().getTime() - 3 * 86_400_000));
    h.sim.advance(10 * MINUTE);
    const result = await syncOnce(h);
    expect(result?.mode).toBe('full');
    expect(result?.fellBack).toMatch(/distinct transfers held of the/);
    expect(await transferDifferences(h)).toEqual([]);
    const { rows } = await h.runtime.pool.query('SELECT status FROM reporting.transfers WHERE id = $1', [
      late,
    ]);
    expect(rows).toHaveLength(1);
  });

  it('a list that turns newest-first falls back to a full scan and is then read newest-first', async () => {
    h = await oldestFirst('tr-reorder');
    h.sim.setSwitches({ transferOrder: 'desc' });
    h.sim.advance(10 * MINUTE);
    const result = await syncOnce(h);
    expect(result?.mode).toBe('full');
    expect(result?.fellBack).not.toBeNull();
    expect(result?.order).toBe('newest-first');
    expect(await transferDifferences(h)).toEqual([]);
    h.sim.advance(10 * MINUTE);
    expect((await syncOnce(h))?.mode).toBe('newest-first');
    expect(await transferDifferences(h)).toEqual([]);
  });

  it('a new silent page cap moves every position: a full scan in the same tick, then tail reads again', async () => {
    h = await oldestFirst('tr-cap');
    h.sim.setSwitches({ pageCap: 10 });
    h.sim.advance(10 * MINUTE);
    const result = await syncOnce(h);
    expect(result?.mode).toBe('full');
    expect(result?.fellBack).toMatch(/different number of records per page/);
    expect(await transferDifferences(h)).toEqual([]);
    h.sim.advance(10 * MINUTE);
    expect((await syncOnce(h))?.mode).toBe('tail');
    expect(await transferDifferences(h)).toEqual([]);
  });

  it('a deleted transfer is dropped from the remembered list by the periodic verification scan', async () => {
    h = await oldestFirst('tr-delete');
    const gone = h.sim.transfers(h.org)[5]!.id;
    h.sim.removeTransfer(h.org, gone);
    h.sim.advance(25 * 3600_000); // past TRANSFERS_FULL_SCAN_EVERY
    const result = await syncOnce(h);
    expect(result?.mode).toBe('full');
    expect(result?.outcome).toBe('complete');
    const { rows } = await h.runtime.pool.query(
      'SELECT count(*)::int AS n FROM reporting.transfer_positions WHERE id = $1',
      [gone],
    );
    expect(rows[0].n).toBe(0);
    h.sim.advance(10 * MINUTE);
    expect((await syncOnce(h))?.mode).toBe('tail');
  });
});

describe('incomplete marks tell the truth', () => {
  it('a scan cut short by late transfers is marked, and the next complete read (a backfill scan) clears it', async () => {
    h = await startHarness({
      name: 'tr-mark',
      sim: {
        days: 3,
        perDay: 40,
        transfersPerDay: 120,
        switches: { transferOrder: 'asc', transferDriftPerPage: 1 },
      },
    });
    const deps = h.runtime.syncContext(h.settings.sources[0]!);
    const short = await tickTransfers(deps);
    expect(short?.outcome).toBe('incomplete');
    // the shortfall was read again before being reported: the drift lists a transfer on two pages, so
    // each read held copies back, and a last read judged them (the rule for copies, sync/copies.ts)
    expect(short?.reads).toBe(3);
    const marked = await h.runtime.checkpoints.get('default', 'transfers');
    expect(marked.incompleteWindows.map((w) => w.window)).toEqual(['scan']);
    h.sim.setSwitches({ transferDriftPerPage: 0 });
    const scan = await runTransfers(deps, { mode: 'full', stopBefore: null, organizationId: null });
    expect(scan.outcome).toBe('complete');
    expect(await transferDifferences(h)).toEqual([]);
    expect((await h.runtime.checkpoints.get('default', 'transfers')).incompleteWindows).toEqual([]);
  });

  it('a shortfall that a second read makes up ends complete, with no mark left', async () => {
    h = await startHarness({
      name: 'tr-reread',
      sim: { days: 3, perDay: 40, transfersPerDay: 120, switches: { transferOrder: 'asc' } },
    });
    const deps = h.runtime.syncContext(h.settings.sources[0]!);
    // two late transfers appear while the first page is served, then the service is quiet
    let served = 0;
    const client = deps.client;
    const listTransfers: typeof client.listTransfers = async (q) => {
      const page = await client.listTransfers(q);
      if (served++ === 0) {
        h!.sim.addTransfer(h!.org, new Date(h!.sim.now().getTime() - 5 * 86_400_000));
        h!.sim.addTransfer(h!.org, new Date(h!.sim.now().getTime() - 6 * 86_400_000));
      }
      return page;
    };
    const result = await tickTransfers({ ...deps, client: { ...client, listTransfers } });
    expect(result?.outcome).toBe('complete');
    expect(result?.reads).toBe(2);
    expect(await transferDifferences(h)).toEqual([]);
    expect((await h.runtime.checkpoints.get('default', 'transfers')).incompleteWindows).toEqual([]);
  });
});

describe('newest-first proves the list whole against total', () => {
  it('a transfer that appears late, older than where the read stops, is caught by a full scan in the same tick', async () => {
    h = await startHarness({
      name: 'tr-newest-late',
      sim: { days: 4, perDay: 40, transfersPerDay: 120, switches: { transferOrder: 'desc' } },
      env: { TRANSFERS_FULL_SCAN_EVERY: '1d', SYNC_LOOKBACK: '1d' },
    });
    expect((await syncOnce(h))?.mode).toBe('full');
    h.sim.advance(20 * MINUTE);
    expect((await syncOnce(h))?.mode).toBe('newest-first');
    h.sim.addTransfer(h.org, new Date(h.sim.now().getTime() - 4 * 86_400_000));
    h.sim.advance(10 * MINUTE);
    const result = await syncOnce(h);
    expect(result?.mode).toBe('full');
    expect(result?.fellBack).toMatch(/distinct transfers held of the/);
    expect(await transferDifferences(h)).toEqual([]);
  });
});

/** `paysync sync --once …` in a child process (async: the simulator answers from this process). */
function cli(harness: Harness, args: string[]): Promise<{ code: number | null; stdout: string }> {
  const env = {
    ...process.env,
    PAYMENTS_BASE_URL: harness.sim.url,
    PAYMENTS_API_KEY: harness.key,
    DATABASE_URL: harness.databaseUrl,
    PAYSYNC_QUEUE_PREFIX: harness.prefix,
    UPSTREAM_RPS: '2000',
    PAGE_SIZE: '25',
    LOG_LEVEL: 'warn',
  };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['bin/paysync.js', ...args], {
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout }));
  });
}

describe('paysync sync --once keeps the promise', () => {
  it('an oldest-first list: current after each run, the second one a tail read', async () => {
    h = await startHarness({
      name: 'tr-cli',
      sim: { days: 4, perDay: 40, transfersPerDay: 120, switches: { transferOrder: 'asc' } },
    });
    const first = await cli(h, ['sync', '--once', '--stream', 'transfers']);
    expect(first.code).toBe(0);
    expect(await transferDifferences(h)).toEqual([]);
    const before = new Map(h.sim.transfers(h.org).map((t) => [t.id, t.status]));
    h.sim.advance(20 * MINUTE);
    const after = h.sim.transfers(h.org);
    expect(after.length).toBeGreaterThan(before.size);
    expect(after.some((t) => before.has(t.id) && before.get(t.id) !== t.status)).toBe(true);
    const since = h.sim.requestLog().length;
    const second = await cli(h, ['sync', '--once', '--stream', 'transfers']);
    expect(second.code).toBe(0);
    expect(second.stdout).toMatch(/transfers: .* complete/);
    expect(await transferDifferences(h)).toEqual([]);
    const { rows } = await h.runtime.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM reporting.transfers`,
    );
    expect(await transferRequests(h, since)).toBeLessThan(Math.ceil(rows[0]!.n / 25)); // fewer than a full scan
  });
});
