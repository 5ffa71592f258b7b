/**
 * A Redis and a PostgreSQL of one test's own, for drills that stop and start them (never the shared
 * servers): each on a fixed free port so that a restart keeps its URL, nothing kept on disk for Redis, a
 * throw-away data folder for PostgreSQL (initdb with trust on loopback, fsync off). Started and stopped on
 * demand; `destroy()` stops them and removes what they left. PostgreSQL refuses to run as root: as root
 * its programs run as the `postgres` user.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { freePort, requireTool, run } from './processes.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class PrivateRedis {
  private child: ChildProcess | null = null;
  private constructor(readonly port: number) {}

  static async create(): Promise<PrivateRedis> {
    requireTool('redis-server', 'redis-server');
    return new PrivateRedis(await freePort());
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Starts it and resolves once it answers PING. */
  async start(): Promise<void> {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
    const child = spawn('redis-server', args, { stdio: 'ignore' });
    this.child = child;
    const probe = new Redis(this.url, {
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    try {
      for (let i = 0; ; i++) {
        try {
          await probe.connect();
          await probe.ping();
          return;
        } catch (error) {
          if (child.exitCode !== null || i > 200)
            throw new Error(`redis-server did not start: ${String(error)}`);
          probe.disconnect();
          await sleep(50);
        }
      }
    } finally {
      probe.disconnect();
    }
  }

  /** Kills it outright (SIGKILL) and resolves once it is gone. */
  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  }
}

/** The directory of PostgreSQL's server programs (initdb, pg_ctl) on Debian. */
function postgresBin(): string {
  const root = '/usr/lib/postgresql';
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  if (!versions[0]) throw new Error(`no PostgreSQL server under ${root}: apt-get install -y postgresql`);
  return join(root, versions[0], 'bin');
}

export class PrivatePostgres {
  private constructor(
    readonly port: number,
    private readonly dir: string,
    private readonly bin: string,
  ) {}

  /** initdb into a fresh folder (not started). */
  static async create(): Promise<PrivatePostgres> {
    const bin = postgresBin();
    const dir = mkdtempSync(join(tmpdir(), 'paysync-pg-'));
    const pg = new PrivatePostgres(await freePort(), dir, bin);
    if (process.getuid?.() === 0) {
      const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
      const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
      chownSync(dir, uid, gid);
    }
    const r = await pg.as(join(bin, 'initdb'), ['-D', pg.data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    if (r.code !== 0) throw new Error(`initdb failed: ${r.stderr}`);
    return pg;
  }

  private get data(): string {
    return join(this.dir, 'data');
  }

  private as(command: string, args: string[]) {
    return process.getuid?.() === 0
      ? run('runuser', ['-u', 'postgres', '--', command, ...args])
      : run(command, args);
  }

  /** The URL of database `db` on it. */
  url(db: string): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${db}`;
  }

  /** Starts the server and resolves once it accepts connections. */
  async start(): Promise<void> {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
    const r = await this.as(join(this.bin, 'pg_ctl'), [
      '-D',
      this.data,
      '-o',
      options,
      '-l',
      join(this.dir, 'log'),
      '-w',
      'start',
    ]);
    if (r.code !== 0) throw new Error(`pg_ctl start failed: ${r.stdout}${r.stderr}`);
  }

  /** Stops it at once (immediate mode: every connection cut, as a crash would). */
  async stop(): Promise<void> {
    await this.as(join(this.bin, 'pg_ctl'), ['-D', this.data, '-m', 'immediate', '-w', 'stop']);
  }

  async destroy(): Promise<void> {
    await this.stop().catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
