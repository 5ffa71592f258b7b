/**
 * A newcomer without PostgreSQL or Redis running gets one line saying which, at which address, and how
 * to start it, and exit 2: no stack trace (for the demo and every command).
 */
import { describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/paysync.js', import.meta.url));

function run(env: Record<string, string>) {
  const result = spawnSync(process.execPath, [BIN, 'demo'], {
    cwd: tmpdir(),
    env: { PATH: process.env.PATH ?? '', ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
  const lines = result.stderr.split('\n').filter((line) => line.trim() !== '');
  return { status: result.status, lines, stderr: result.stderr };
}

describe('services not reachable', () => {
  it('Redis down: one line naming Redis, its address and how to start it; exit 2', () => {
    const r = run({ REDIS_URL: 'redis://127.0.0.1:1' });
    expect(r.status).toBe(2);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(/Redis is not reachable at 127\.0\.0\.1:1 .*redis-server/);
    expect(r.stderr).not.toMatch(/\bat .+:\d+:\d+/);
  });

  it('PostgreSQL down: one line naming PostgreSQL, its address and how to start it; exit 2', () => {
    const r = run({ DATABASE_URL: 'postgres://postgres@127.0.0.1:1/paysync' });
    expect(r.status).toBe(2);
    expect(r.lines).toHaveLength(1);
    expect(r.lines[0]).toMatch(/PostgreSQL is not reachable at 127\.0\.0\.1:1\/.*pg_ctlcluster/);
    expect(r.stderr).not.toMatch(/\bat .+:\d+:\d+/);
  });
});
