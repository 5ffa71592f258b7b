/**
 * The README's first command, `npm run demo`, on the embedded default: it exits 0, its backfill is
 * recorded in PostgreSQL and finishes, every day's pack reconciles with the simulator, and it writes its
 * packs under the folder it runs in.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';

const BIN = fileURLToPath(new URL('../../bin/paysync.js', import.meta.url));
const DEMO_DB = 'postgres://postgres@127.0.0.1:5432/paysync_demo';

function runDemo(cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, 'demo'], {
      cwd,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? cwd },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

let dir: string | undefined;
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('npm run demo', () => {
  it('backfills (recorded in PostgreSQL), ticks, packs and reconciles every day with the service', async () => {
    dir = await mkdtemp(join(tmpdir(), 'paysync-demo-'));
    const { code, stdout, stderr } = await runDemo(dir);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const backfill = /backfill #(\d+) \S+ → \S+ \[#+\] (\d+)\/(\d+) records (\d+)/.exec(stdout);
    expect(backfill).not.toBeNull();
    const [, id, done, total, records] = backfill!;
    expect(done).toBe(total);
    expect(Number(records)).toBeGreaterThan(0);
    const packs = stdout.split('\n').filter((l) => /^ {2}\d{4}-\d{2}-\d{2} {2}v\d+/.test(l));
    expect(packs).toHaveLength(3);
    for (const line of packs) expect(line).toMatch(/reconcile: matches the service$/);
    expect(existsSync(join(dir, 'exports', packs[0]!.trim().slice(0, 10), 'manifest.json'))).toBe(true);

    const client = new pg.Client({ connectionString: DEMO_DB });
    await client.connect();
    try {
      const { rows } = await client.query<{ state: string; items: number; done: number }>(
        `SELECT b.state, count(i.*)::int AS items, count(*) FILTER (WHERE i.state = 'done')::int AS done
           FROM reporting.backfills b JOIN reporting.backfill_items i ON i.backfill_id = b.id
          WHERE b.id = $1 GROUP BY b.state`,
        [Number(id)],
      );
      expect(rows).toEqual([{ state: 'done', items: Number(total), done: Number(total) }]);
    } finally {
      await client.end();
    }
  }, 120_000);
});
