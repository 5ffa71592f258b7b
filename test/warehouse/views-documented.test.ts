/**
 * The analysts' example queries, run exactly as written (the first ```sql block of "Example queries" in
 * docs/analysts.md) on a warehouse synced from the simulator: each returns rows, so an analyst trying them
 * on the demo data sees what they describe, not an empty result.
 */
import { afterAll, beforeAll, expect, it } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { syncAll } from '../helpers/export.js';
import { startHarness, type Harness } from '../helpers/sync-harness.js';

let h: Harness;
let statements: string[];

beforeAll(async () => {
  const doc = await readFile(new URL('../../docs/analysts.md', import.meta.url), 'utf8');
  const start = doc.indexOf('## Example queries');
  if (start < 0) throw new Error('docs/analysts.md has no "## Example queries" section');
  const section = doc.slice(start);
  const block = /```sql\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
  statements = block
    .split(/;\s*(?:--[^\n]*)?\n/)
    .map((s) => s.replace(/^\s*--.*$/gm, '').trim())
    .filter(Boolean);
  h = await startHarness({
    name: 'views-readme',
    sim: { days: 3, perDay: 80, malformed: 4 },
    env: { REPORT_TIMEZONE: 'Africa/Porto-Novo' },
  });
  await syncAll(h);
  h.sim.advance(30 * 60_000); // statuses move on; the next tick sees some payments in a second status
  await syncAll(h);
});
afterAll(async () => h?.close());

it('every example query of docs/analysts.md returns rows on simulator data', async () => {
  expect(statements[0]).toMatch(/^SET TIME ZONE/);
  expect(statements.length).toBe(6);
  const client = await h.runtime.pool.connect();
  try {
    for (const sql of statements) {
      const { command, rows } = await client.query(sql);
      if (command === 'SELECT') expect([sql, rows.length > 0]).toEqual([sql, true]);
    }
  } finally {
    client.release(true);
  }
});
