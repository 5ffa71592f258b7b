/**
 * Every loader warning reaches the log: a live tick that meets a final status going back (the warehouse
 * holds COMPLETE, the service now lists the record non-final with a newer updatedAt) writes the loader's
 * warning through the sync's own logger, not a silent one.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { Writable } from 'node:stream';
import { createLogger } from '../../src/log.js';
import { tickPayments } from '../../src/sync/tick.js';
import { startHarness, syncAll, type Harness } from '../helpers/sync-harness.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness({ name: 'loader-warnings', sim: { days: 2, perDay: 60 } });
});
afterAll(async () => h?.close());

function capture(lines: Array<Record<string, unknown>>) {
  const destination = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  return createLogger({ level: 'info', format: 'json', destination });
}

it('a final status going back to a non-final one is logged as a warning by the live tick', async () => {
  const deps = h.runtime.syncContext(h.settings.sources[0]!);
  await syncAll(h);
  const open = h.sim.payments(h.org).find((p) => p.status === 'PENDING' || p.status === 'INIT');
  expect(open).toBeDefined();
  // behind paysync's back: the stored copy claims COMPLETE, one millisecond older than the service's
  await h.runtime.pool.query(
    `UPDATE reporting.payments SET status = 'COMPLETE', updated_at = updated_at - interval '1 millisecond'
      WHERE id = $1`,
    [open!.id],
  );
  const lines: Array<Record<string, unknown>> = [];
  await tickPayments({ ...deps, log: capture(lines) });
  const warning = lines.find((l) => l.msg === 'a final status went back to a non-final one');
  expect(warning).toMatchObject({ level: 'warn', id: open!.id, from: 'COMPLETE', to: open!.status });
});
