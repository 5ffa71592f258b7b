/**
 * Checkpoints in Redis: they only move forward (even with workers racing), remember errors and windows
 * for `paysync status`, notice when Redis lost them, and stay under their prefix.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { CheckpointStore, parseWindowKey, windowKey } from '../../src/sync/checkpoints.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const prefix = `test-cp-${randomUUID()}`;
let a: Redis;
let b: Redis;
let store: CheckpointStore;

const day = (d: number, h = 0) => new Date(Date.UTC(2026, 10, d, h));

/** Every key under a prefix (SCAN, not KEYS: the Redis is shared). */
async function keysUnder(p: string): Promise<string[]> {
  const found: string[] = [];
  for await (const batch of a.scanStream({ match: `${p}:*`, count: 1000 }))
    found.push(...(batch as string[]));
  return found.sort();
}

beforeAll(() => {
  a = new Redis(REDIS_URL);
  b = new Redis(REDIS_URL);
  store = new CheckpointStore(a, prefix);
});

afterAll(async () => {
  const keys = await keysUnder(prefix);
  if (keys.length > 0) await a.del(...keys);
  await Promise.all([a.quit(), b.quit()]);
});

describe('window keys', () => {
  it('round-trip and reject anything else', () => {
    const key = windowKey(day(20), day(21));
    expect(key).toBe('2026-11-20T00:00:00.000Z/2026-11-21T00:00:00.000Z');
    expect(parseWindowKey(key)).toEqual({ start: day(20), end: day(21) });
    expect(parseWindowKey('scan')).toBeNull();
    expect(parseWindowKey('2026-11-20/2026-11-21')).toBeNull();
    expect(parseWindowKey('nonsense/2026-11-21T00:00:00.000Z')).toBeNull();
    expect(parseWindowKey(`${key}/extra`)).toBeNull();
  });
});

describe('checkpoint store', () => {
  it('starts empty and missing', async () => {
    expect(await store.isMissing('fresh', 'payments')).toBe(true);
    expect(await store.get('fresh', 'payments')).toEqual({
      checkpoint: null,
      lastTickAt: null,
      lastSuccessAt: null,
      lastError: null,
      openWindows: [],
      incompleteWindows: [],
    });
  });

  it('moves the checkpoint forward only', async () => {
    expect(await store.advance('fwd', 'payments', day(21))).toEqual(day(21));
    expect(await store.advance('fwd', 'payments', day(20))).toEqual(day(21));
    expect((await store.get('fwd', 'payments')).checkpoint).toEqual(day(21));
    expect(await store.advance('fwd', 'payments', day(22))).toEqual(day(22));
    expect((await store.get('fwd', 'transfers')).checkpoint).toBeNull();
  });

  it('keeps the latest of 20 concurrent advances from two workers', async () => {
    const other = new CheckpointStore(b, prefix);
    const hours = Array.from({ length: 20 }, (_, i) => (i * 7) % 20); // shuffled 0..19
    await Promise.all(hours.map((h, i) => (i % 2 ? store : other).advance('race', 'payments', day(20, h))));
    expect((await other.get('race', 'payments')).checkpoint).toEqual(day(20, 19));
  });

  it('reset sets the checkpoint unconditionally, and null means "rebuilt, nothing found"', async () => {
    await store.advance('reset', 'transfers', day(25));
    await store.reset('reset', 'transfers', day(20));
    expect((await store.get('reset', 'transfers')).checkpoint).toEqual(day(20));

    await store.reset('reset', 'transfers', null);
    expect((await store.get('reset', 'transfers')).checkpoint).toBeNull();
    expect(await store.isMissing('reset', 'transfers')).toBe(false);
    expect(await store.advance('reset', 'transfers', day(1))).toEqual(day(1));
  });

  it('records the last error and clears it on success', async () => {
    const clock = day(20, 5);
    const timed = new CheckpointStore(a, prefix, () => clock);
    await timed.recordError('err', 'payments', { message: 'upstream said 503', code: 'UPSTREAM_SERVER' });
    let state = await timed.get('err', 'payments');
    expect(state.lastError).toEqual({ at: clock, message: 'upstream said 503', code: 'UPSTREAM_SERVER' });
    expect(state.lastTickAt).toBeNull();

    await timed.recordSuccess('err', 'payments', day(20, 6));
    state = await timed.get('err', 'payments');
    expect(state.lastError).toBeNull();
    expect(state.lastTickAt).toEqual(day(20, 6));
    expect(state.lastSuccessAt).toEqual(day(20, 6));
  });

  it('bounds a runaway error message', async () => {
    await store.recordError('long', 'payments', { message: 'x'.repeat(10_000), code: 'ERROR' });
    expect((await store.get('long', 'payments')).lastError?.message).toHaveLength(2000);
  });

  it('tracks open windows', async () => {
    const w1 = windowKey(day(20), day(21));
    const w2 = windowKey(day(21), day(22));
    await store.markWindowOpen('win', 'payments', w2);
    await store.markWindowOpen('win', 'payments', w1);
    await store.markWindowOpen('win', 'payments', w1);
    expect((await store.get('win', 'payments')).openWindows).toEqual([w1, w2]);

    await store.markWindowClosed('win', 'payments', w1);
    expect((await store.get('win', 'payments')).openWindows).toEqual([w2]);
    expect((await store.get('win', 'transfers')).openWindows).toEqual([]);
  });

  it('tracks incomplete windows with their latest detail until cleared', async () => {
    const clock = { now: day(22, 1) };
    const timed = new CheckpointStore(a, prefix, () => clock.now);
    const w1 = windowKey(day(20), day(21));
    await timed.markIncomplete('inc', 'payments', w1, 'total 120, received 100');
    await timed.markIncomplete('inc', 'payments', 'scan', 'page 3 timed out');
    clock.now = day(22, 2);
    await timed.markIncomplete('inc', 'payments', w1, 'total 120, received 119');

    expect((await timed.get('inc', 'payments')).incompleteWindows).toEqual([
      { window: w1, detail: 'total 120, received 119', at: day(22, 2) },
      { window: 'scan', detail: 'page 3 timed out', at: day(22, 1) },
    ]);
    await timed.clearIncomplete('inc', 'payments', w1);
    expect((await timed.get('inc', 'payments')).incompleteWindows.map((w) => w.window)).toEqual(['scan']);
  });

  it('notices a checkpoint lost from Redis', async () => {
    await store.advance('lost', 'payments', day(20));
    expect(await store.isMissing('lost', 'payments')).toBe(false);

    await a.del(...(await keysUnder(`${prefix}:cp:lost`)));
    expect(await store.isMissing('lost', 'payments')).toBe(true);
    // Bookkeeping written after the loss is not mistaken for a checkpoint.
    await store.recordError('lost', 'payments', { message: 'boom', code: 'ERROR' });
    expect(await store.isMissing('lost', 'payments')).toBe(true);
  });

  it('keeps every key under its prefix, so prefixes isolate tenants', async () => {
    const tenant = `${prefix}-tenant`;
    const isolated = new CheckpointStore(a, tenant);
    await isolated.advance('shared-name', 'payments', day(20));
    await isolated.markWindowOpen('shared-name', 'payments', windowKey(day(20), day(21)));
    await isolated.markIncomplete('shared-name', 'payments', 'scan', 'x');
    await isolated.recordSuccess('shared-name', 'payments', day(20));

    expect(await store.isMissing('shared-name', 'payments')).toBe(true);
    expect((await store.get('shared-name', 'payments')).openWindows).toEqual([]);
    const keys = await keysUnder(tenant);
    expect(keys).toEqual([
      `${tenant}:cp:shared-name:payments`,
      `${tenant}:cp:shared-name:payments:incomplete`,
      `${tenant}:cp:shared-name:payments:open`,
    ]);
    await a.del(...keys);
  });
});
