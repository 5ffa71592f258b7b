/**
 * `sync --once` keeps the same books as the worker's tick (one use case, src/sync/run-work.ts): each
 * stream it ticks records its own success, transfers included (it once recorded payments only).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { harnessEnv, startCli } from '../helpers/cli-child.js';
import { startHarness, type Harness } from '../helpers/sync-harness.js';

let h: Harness | null = null;
afterEach(async () => {
  await h?.close();
  h = null;
});

describe('sync --once', () => {
  it('records the success of each stream it ticks', async () => {
    h = await startHarness({ name: 'synconce' });
    const child = startCli(['sync', '--once'], harnessEnv(h));
    expect(await child.exited).toBe(0);
    expect(child.stdout()).toContain('default payments:');
    expect(child.stdout()).toContain('default transfers:');
    for (const stream of ['payments', 'transfers'] as const) {
      const state = await h.runtime.checkpoints.get('default', stream);
      expect(state.lastSuccessAt).not.toBeNull();
      expect(state.lastError).toBeNull();
    }
  });

  it('--stream transfers records transfers, and leaves payments untouched', async () => {
    h = await startHarness({ name: 'synconcet' });
    const child = startCli(['sync', '--once', '--stream', 'transfers'], harnessEnv(h));
    expect(await child.exited).toBe(0);
    expect((await h.runtime.checkpoints.get('default', 'transfers')).lastSuccessAt).not.toBeNull();
    expect((await h.runtime.checkpoints.get('default', 'payments')).lastSuccessAt).toBeNull();
  });
});
