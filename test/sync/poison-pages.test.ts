/**
 * Poison records through a real sync: the simulator serves every malformed and poison kind (an amount of
 * 1e200000, year 0000, offset +16:00, a 9,000-character id, duplicate keys on canonical and lossless
 * pages, extra_data 5,000 levels deep, NUL, a lone surrogate…) among valid records. Every valid neighbour
 * lands exactly, every poison record is quarantined once with a reason a person can read, the windows
 * complete and count the poison as rejects, not records.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PAYMENT_DEFECT_KINDS, TRANSFER_DEFECT_KINDS } from '../../src/sim/malformed.js';
import {
  paymentDifferences,
  startHarness,
  transferDifferences,
  type Harness,
} from '../helpers/sync-harness.js';
import { tickPayments, tickTransfers } from '../../src/sync/tick.js';

let h: Harness;
const KINDS = PAYMENT_DEFECT_KINDS.length;

/** What each poison kind's reason must say (the schema kinds only need a reason at all). */
const REASONS: Record<string, RegExp> = {
  'amount-overflow': /\(at amount\) is out of range/,
  'amount-scale': /amount has more than 20 decimal places/,
  'year-zero': /createdAt: year 0000 is outside 1970-9999/,
  'offset-16': /updatedAt: offset \+16:00 is beyond ±14:00/,
  'long-id': /id is 9009 bytes long/,
  'duplicate-key': /duplicate key "amount"/,
  'duplicate-key-lossless': /duplicate key "amount"/,
  'nul-text': /NUL character \(at reference\)/,
  'lone-surrogate': /unpaired UTF-16 surrogate \(at reference\)/,
  'deep-extra-data': /nested more than 32 levels deep \(at extra_data/,
};

beforeAll(async () => {
  // windows without padding do not overlap, so the sync log's per-window counts add up to the records once
  h = await startHarness({ name: 'poison', sim: { malformed: KINDS }, env: { WINDOW_PAD: '0s' } });
});
afterAll(async () => {
  await h?.close();
});

function kindOf(recordId: string | null, raw: string): string {
  const m = /^bad_(.+?)_\d+_\d+$/.exec(recordId ?? '') ?? /"id":"bad_(.+?)_\d+_\d+"/.exec(raw);
  if (m) return m[1] as string;
  if ((recordId ?? raw).includes('bad_long_')) return 'long-id';
  if (raw.includes('"id": null') || raw.includes('"id":null')) return 'null-id';
  return 'unknown';
}

describe('poison records among valid ones', () => {
  it('every valid neighbour lands exactly and every poison record is quarantined with its reason', async () => {
    const deps = h.runtime.syncContext(h.settings.sources[0]!);
    const payments = await tickPayments(deps);
    expect(payments.windows.every((w) => w.outcome === 'complete')).toBe(true);
    const transfers = await tickTransfers(deps);
    expect(transfers?.outcome).toBe('complete');

    expect(await paymentDifferences(h)).toEqual([]);
    expect(await transferDifferences(h)).toEqual([]);

    const { rows } = await h.runtime.pool.query<{
      stream: string;
      record_id: string | null;
      raw: string;
      reason: string;
    }>(
      `SELECT stream, record_id, coalesce(raw::text, raw_text) AS raw, reason
         FROM reporting.sync_rejects WHERE resolved_at IS NULL`,
    );
    const seen = { payments: new Map<string, string>(), transfers: new Map<string, string>() };
    for (const r of rows) {
      const kind = kindOf(r.record_id, r.raw);
      expect(r.reason).toMatch(/\S/);
      expect(r.raw).not.toBe('[object Object]');
      seen[r.stream as 'payments' | 'transfers'].set(kind, r.reason);
    }
    expect([...seen.payments.keys()].sort()).toEqual([...PAYMENT_DEFECT_KINDS].sort());
    expect([...seen.transfers.keys()].sort()).toEqual([...TRANSFER_DEFECT_KINDS].sort());
    for (const [kind, pattern] of Object.entries(REASONS)) {
      expect(seen.payments.get(kind)).toMatch(pattern);
      if (kind !== 'deep-extra-data') expect(seen.transfers.get(kind)).toMatch(pattern);
    }

    // the deep record is kept raw (as text: too deep for JSONB), not as "[object Object]"
    const deep = rows.find((r) => kindOf(r.record_id, r.raw) === 'deep-extra-data');
    expect(deep?.raw.startsWith('{"id":"bad_deep-extra-data_')).toBe(true);

    // the sync log counts them as rejects, not records
    const windows = await h.runtime.pool.query<{ stream: string; records: number; rejects: number }>(
      `SELECT stream, sum(records)::int AS records, sum(rejects)::int AS rejects
         FROM reporting.sync_windows GROUP BY stream ORDER BY stream`,
    );
    const payRow = windows.rows.find((w) => w.stream === 'payments');
    expect(payRow?.rejects).toBe(PAYMENT_DEFECT_KINDS.length);
    expect(payRow?.records).toBe(h.sim.payments(h.org).length);
  });
});
