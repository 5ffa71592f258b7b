/**
 * The rule for copies of one record on different pages (src/sync/copies.ts), the same for payments and
 * transfers: the newer updatedAt is written, a tie none, every distinct version quarantined with the
 * reason; copies held back by a read until one holds them all.
 */
import { describe, expect, it } from '@jest/globals';
import { HeldCopies, judgeCopies } from '../../src/sync/copies.js';

const record = (updatedAt: string, status = 'COMPLETE', amount = 100) => ({
  id: 't-1',
  status,
  amount,
  updatedAt,
});

describe('judgeCopies', () => {
  it('the same record listed twice: one version kept, no reject', () => {
    const a = record('2024-06-15T10:00:00.000Z');
    expect(judgeCopies([a, { ...a }])).toEqual({ keep: a, rejects: [] });
  });
  it('the newer updatedAt wins whatever the order listed; both versions are rejects with the reason', () => {
    const old = record('2024-06-15T10:00:00.000Z', 'PENDING');
    const newer = record('2024-06-15T10:00:01.000Z', 'FAILED');
    for (const copies of [
      [old, newer],
      [newer, old],
    ]) {
      const verdict = judgeCopies(copies);
      expect(verdict.keep).toBe(newer);
      expect(verdict.rejects.map((r) => r.raw)).toEqual(copies);
      for (const r of verdict.rejects) {
        expect(r.id).toBe('t-1');
        expect(r.reason).toMatch(/^contradicting copies: .*status, updatedAt differ.*the newer updatedAt/);
      }
    }
  });
  it('a tie at the newest updatedAt: none kept', () => {
    const a = record('2024-06-15T10:00:00.000Z', 'COMPLETE', 100);
    const b = record('2024-06-15T10:00:00.000Z', 'COMPLETE', 101);
    const verdict = judgeCopies([a, b]);
    expect(verdict.keep).toBeNull();
    expect(verdict.rejects).toHaveLength(2);
    expect(verdict.rejects[0]!.reason).toMatch(/amount differ.*none is kept/);
  });
});

describe('HeldCopies', () => {
  it('holds a repeated id unjudged, every copy of a watched id, and judges only the watched', () => {
    const first = new HeldCopies<ReturnType<typeof record>>(undefined);
    expect(first.hold(record('2024-06-15T10:00:00.000Z'), false)).toBe(false); // written at once
    expect(first.hold(record('2024-06-15T10:00:01.000Z', 'FAILED'), true)).toBe(true);
    expect([...first.unjudged]).toEqual(['t-1']);
    expect(first.judge()).toEqual({ records: [], rejects: [], unwritten: 0, contradicted: false });

    const next = new HeldCopies<ReturnType<typeof record>>(new Set(first.unjudged));
    expect(next.hold(record('2024-06-15T10:00:00.000Z'), false)).toBe(true);
    expect(next.hold(record('2024-06-15T10:00:01.000Z', 'FAILED'), true)).toBe(true);
    expect(next.unjudged.size).toBe(0);
    expect(next.watchedSeen()).toEqual(['t-1']);
    const verdict = next.judge();
    expect(verdict.records.map((r) => r.status)).toEqual(['FAILED']);
    expect(verdict).toMatchObject({ unwritten: 1, contradicted: true });
    expect(verdict.rejects).toHaveLength(2);
  });
  it('gives the copies it holds of the ids asked for, none of an id it holds nothing of', () => {
    const held = new HeldCopies<ReturnType<typeof record>>(new Set(['t-1']));
    const a = record('2024-06-15T10:00:00.000Z');
    const b = record('2024-06-15T10:00:01.000Z', 'FAILED');
    held.hold(a, false);
    held.hold(b, true);
    expect(held.copiesOf(['t-1', 't-2'])).toEqual([a, b]);
    expect(held.copiesOf([])).toEqual([]);
  });
});
