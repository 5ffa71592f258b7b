/**
 * A local PgBouncer in transaction mode in front of the test PostgreSQL (any database: `* =`), on a free
 * port, started and stopped by pid. PgBouncer refuses to run as root: as root it runs as `postgres`.
 * auth_type = trust still needs an auth_file naming the user.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVER_URL } from './db.js';
import { freePort, requireTool, start, type Started } from './processes.js';

export interface PgBouncer {
  port: number;
  /** The same database through PgBouncer. */
  urlFor(database: string): string;
  stop(): Promise<void>;
}

export async function startPgBouncer(options: { poolSize?: number } = {}): Promise<PgBouncer> {
  const binary = requireTool('pgbouncer', 'pgbouncer');
  const server = new URL(SERVER_URL);
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'paysync-pgbouncer-'));
  chmodSync(dir, 0o755);
  const ini = join(dir, 'pgbouncer.ini');
  writeFileSync(join(dir, 'userlist.txt'), `"${server.username || 'postgres'}" ""\n`);
  writeFileSync(
    ini,
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || '5432'}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      'pool_mode = transaction',
      'max_client_conn = 500',
      `default_pool_size = ${options.poolSize ?? 20}`,
      'ignore_startup_parameters = extra_float_digits,options',
      '',
    ].join('\n'),
  );
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
    for (const path of [dir, ini, join(dir, 'userlist.txt')]) chownSync(path, id('-u'), id('-g'));
  }
  const child: Started = asRoot
    ? start('runuser', ['-u', 'postgres', '--', binary, ini])
    : start(binary, [ini]);
  await child.waitFor(/process up|listening on 127\.0\.0\.1:\d+/, 30_000);
  return {
    port,
    urlFor(database: string) {
      const url = new URL(SERVER_URL);
      url.port = String(port);
      url.pathname = `/${database}`;
      return url.toString();
    },
    async stop() {
      await child.stop(10_000);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
