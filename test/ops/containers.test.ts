/**
 * The container setup, proved without a Docker engine (none runs here):
 * - docker-compose.yml as Docker Compose reads it (`docker-compose config`): migrations as a one-shot
 *   service, workers gated on healthy dependencies and a successful migrate, no host port on the worker
 *   (so `--scale worker=3` cannot clash), a health check on /healthz; long-running services restart
 *   unless stopped, the worker's stop grace outlasts its drain, PostgreSQL's data is on a named volume;
 * - the Dockerfile: non-root USER, HEALTHCHECK, the entrypoint;
 * - docker/entrypoint.sh run directly: arguments pass through, exit codes come back, no command = worker;
 * - the image's own steps on a copy of what the Dockerfile copies: its `npm` RUN lines (npm ci → build,
 *   prune), then, as a non-root user, the simulator, `migrate`, the default command (a worker whose
 *   HEALTHCHECK passes) and `backfill --wait`, which exits 0 when the backfill is done.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, chownSync, cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';
import { freePort, requireTool, run, start } from '../helpers/processes.js';
import { uniqueName, urlFor } from '../helpers/db.js';
import { maintenanceUrl } from '../../src/warehouse/migrate.js';

const ROOT = resolve(import.meta.dirname, '../..');
const ENTRYPOINT = join(ROOT, 'docker/entrypoint.sh');
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

interface ComposeService {
  command?: string[];
  ports?: unknown[];
  expose?: unknown[];
  restart?: string;
  stop_grace_period?: string;
  volumes?: Array<string | { type?: string; source?: string; target?: string }>;
  healthcheck?: { test?: string[]; disable?: boolean };
  depends_on?: Record<string, { condition: string }>;
  environment?: Record<string, string>;
}

/** `docker-compose config` (Compose's own reading of the file), turned into JSON with its PyYAML. */
async function composeConfig(): Promise<{
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}> {
  requireTool('docker-compose', 'docker-compose');
  const config = await run('docker-compose', ['config'], { cwd: ROOT });
  expect({ code: config.code, stderr: config.stderr }).toEqual({ code: 0, stderr: '' });
  const toJson = spawnSync(
    'python3',
    ['-c', 'import json,sys,yaml; print(json.dumps(yaml.safe_load(sys.stdin)))'],
    { input: config.stdout, encoding: 'utf8' },
  );
  expect({ code: toJson.status, stderr: toJson.stderr }).toEqual({ code: 0, stderr: '' });
  return JSON.parse(toJson.stdout) as {
    services: Record<string, ComposeService>;
    volumes?: Record<string, unknown>;
  };
}

/** A Compose duration (`45s`, `1m30s`, `1m`) in seconds. */
function composeSeconds(text: string | undefined): number {
  const m = /^(?:(\d+)m)?(?:(\d+)s)?$/.exec(text ?? '');
  if (!text || !m) return 10; // Compose's default grace
  return Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0);
}

/** The longest drain of a busy worker measured (15-19 s), rounded up to the worker's drain bound. */
const LONGEST_DRAIN_S = 25;

describe('docker-compose.yml', () => {
  it('is valid Compose, runs migrations once before workers, and lets workers scale', async () => {
    const { services } = await composeConfig();
    const { worker, migrate } = services;
    if (!worker || !migrate) throw new Error('services worker and migrate must exist');
    expect(migrate.command).toEqual(['migrate']);
    expect(migrate.restart).toBe('no');
    expect(worker.depends_on).toEqual({
      postgres: { condition: 'service_healthy' },
      redis: { condition: 'service_healthy' },
      simulator: { condition: 'service_healthy' },
      migrate: { condition: 'service_completed_successfully' },
    });
    // A published host port on a scaled service is the clash of `--scale worker=3`.
    expect(worker.ports).toBeUndefined();
    expect(worker.healthcheck?.test).toEqual(['CMD', 'node', 'docker/healthcheck.mjs']);
    expect(worker.environment?.METRICS_PORT).toBe('9464');
    // the simulator speaks plain http on the compose network, and Prometheus scrapes worker:9464
    expect(worker.environment?.PAYMENTS_ALLOW_HTTP).toBe('1');
    expect(migrate.environment?.PAYMENTS_ALLOW_HTTP).toBe('1');
    expect(worker.environment?.OPS_ALLOWED_HOSTS).toBe('worker');
    // Every service that others wait on for health has a health check.
    for (const [name, service] of Object.entries(services)) {
      for (const [dep, { condition }] of Object.entries(service.depends_on ?? {})) {
        if (condition === 'service_healthy')
          expect({ dep, test: services[dep]?.healthcheck?.test?.[0] }).toEqual({ dep, test: 'CMD' });
      }
      expect({ name, command: service.command?.[0] }).not.toEqual({ name, command: 'sh' });
    }
  });
});

describe('docker-compose.yml keeps running and keeps its data', () => {
  it('restarts what runs for good, lets a worker drain before the kill, keeps the warehouse on a volume', async () => {
    const { services, volumes } = await composeConfig();
    const restart = Object.fromEntries(Object.entries(services).map(([name, s]) => [name, s.restart]));
    expect(restart).toEqual({
      postgres: 'unless-stopped',
      redis: 'unless-stopped',
      simulator: 'unless-stopped',
      migrate: 'no',
      worker: 'unless-stopped',
    });
    // `docker stop` (every deploy) waits this long before SIGKILL: more than a drain takes
    expect(composeSeconds(services.worker?.stop_grace_period)).toBeGreaterThan(LONGEST_DRAIN_S);
    const data = (services.postgres?.volumes ?? []).map((v) =>
      typeof v === 'string' ? v : `${v.source ?? ''}:${v.target ?? ''}`,
    );
    expect(data.map((v) => v.replace(/:rw$/, ''))).toContain('pgdata:/var/lib/postgresql/data');
    expect(Object.keys(volumes ?? {})).toEqual(expect.arrayContaining(['pgdata', 'exports']));
  });
});

describe('Dockerfile', () => {
  it('builds on Node 24 LTS, runs as a non-root user, checks /healthz and starts through the entrypoint with `worker`', () => {
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    // one base image, Node 24 LTS on Debian slim (the supported runtime; package.json's engines allow it)
    expect(dockerfile.match(/^FROM .*$/gm)).toEqual(['FROM node:24-bookworm-slim']);
    const engines = (
      JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } }
    ).engines.node;
    expect(engines.split('||').map((range) => range.trim())).toContain('^24.0.0');
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK .*CMD \["node", "docker\/healthcheck\.mjs"\]$/m);
    expect(dockerfile).toMatch(/^ENTRYPOINT \["docker\/entrypoint\.sh"\]$/m);
    expect(dockerfile).toMatch(/^CMD \["worker"\]$/m);
  });
});

describe('docker/entrypoint.sh', () => {
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin' };

  it('passes arguments to paysync and returns its exit code', async () => {
    const r = await run(ENTRYPOINT, ['backfill', '--from', '2026-11-02', '--to', '2026-11-01'], {
      env: { ...env, PAYMENTS_BASE_URL: 'http://127.0.0.1:1', PAYMENTS_API_KEY: 'sk_test_entrypoint' },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^paysync backfill: /);
  });

  it('runs the worker when no command is given', async () => {
    // A worker-only check (the dashboard on a public address without a token) proves which command ran.
    const r = await run(ENTRYPOINT, [], {
      env: {
        ...env,
        PAYMENTS_BASE_URL: 'http://127.0.0.1:1',
        PAYMENTS_API_KEY: 'sk_test_entrypoint',
        DASHBOARD_PORT: '1',
        DASHBOARD_HOST: '0.0.0.0',
      },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^paysync worker: DASHBOARD_TOKEN must be set/);
  });

  it('runs a shell instead when asked, and returns its exit code', async () => {
    const r = await run(ENTRYPOINT, ['sh', '-c', 'echo from-shell; exit 7'], { env });
    expect({ code: r.code, out: r.stdout }).toEqual({ code: 7, out: 'from-shell\n' });
  });

  it('execs paysync, so the signal docker stop sends reaches it directly', async () => {
    const sim = start(ENTRYPOINT, ['sim', '--port', '0', '--days', '1', '--per-day', '5'], { env });
    const [, url] = (await sim.waitFor(/listening on (\S+)/)) as unknown as [string, string];
    // An answer means its start-up code (which installs the SIGTERM handler) has run to the end.
    expect((await fetch(`${url}/__sim/state`)).status).toBe(200);
    const cmdline = readFileSync(`/proc/${sim.child.pid}/cmdline`, 'utf8').split('\0');
    expect(cmdline.slice(0, 2)).toEqual(['node', join(ROOT, 'bin/paysync.js')]);
    expect(await sim.stop()).toBe(0);
    expect(sim.output()).toContain('paysync sim: stopped');
  });
});

/** The Dockerfile's COPY sources and its `npm` RUN lines, in order. */
function imageSteps(): { copies: string[]; npmRuns: string[] } {
  const lines = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').split('\n');
  const copies = lines
    .filter((l) => l.startsWith('COPY '))
    .flatMap((l) =>
      l
        .split(/\s+/)
        .slice(1, -1)
        .filter((w) => !w.startsWith('--')),
    );
  const npmRuns = lines.filter((l) => l.startsWith('RUN npm ')).map((l) => l.slice('RUN '.length));
  return { copies, npmRuns };
}

describe('the image steps on a copy of the tree', () => {
  const stops: Array<() => Promise<unknown>> = [];
  let copy: string | undefined;
  afterAll(async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    if (copy) rmSync(copy, { recursive: true, force: true });
  });

  it('npm ci, prune, then migrate, worker (healthy) and backfill --wait as a non-root user', async () => {
    const { copies, npmRuns } = imageSteps();
    expect(npmRuns.join(' && ')).toMatch(/npm ci .*npm prune --omit=dev/);
    copy = mkdtempSync(join(tmpdir(), 'paysync-image-'));
    chmodSync(copy, 0o755);
    for (const source of copies) cpSync(join(ROOT, source), join(copy, source), { recursive: true });
    for (const step of npmRuns) {
      // The Docker build's network is here the npm cache the worktree was installed from.
      const r = await run('sh', ['-c', step], {
        cwd: copy,
        env: { ...process.env, npm_config_prefer_offline: 'true' },
      });
      expect({ step, code: r.code, stderr: r.code === 0 ? '' : r.stderr }).toEqual({
        step,
        code: 0,
        stderr: '',
      });
    }
    // Built, and pruned: the test tools are gone (typescript stays: a peer of @bull-board's valibot).
    expect(
      await run(
        'sh',
        ['-c', 'test -f dist/src/cli/main.js && test -d node_modules/pg && ! test -e node_modules/jest'],
        { cwd: copy },
      ),
    ).toMatchObject({ code: 0 });

    // The image runs as `node`; here any unprivileged user stands in for it.
    const asUser = (args: string[]): [string, string[]] =>
      process.getuid?.() === 0
        ? ['runuser', ['-u', 'postgres', '--', ...args]]
        : [args[0] as string, args.slice(1)];
    const exportDir = mkdtempSync(join(tmpdir(), 'paysync-image-exports-'));
    if (process.getuid?.() === 0) chownSync(exportDir, 101, 104);
    stops.push(async () => rmSync(exportDir, { recursive: true, force: true }));

    const db = uniqueName('image');
    const prefix = `paysync-image-${db.slice(-8)}`;
    const [metricsPort] = [await freePort()];
    const entry = join(copy, 'docker/entrypoint.sh');
    const sim = start(
      ...asUser([entry, 'sim', '--port', '0', '--days', '2', '--per-day', '40', '--api-key', 'image-key']),
      {
        cwd: copy,
        env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production' },
      },
    );
    stops.push(() => sim.stop());
    const [, simUrl] = (await sim.waitFor(/listening on (\S+)/)) as unknown as [string, string];
    const env = {
      PATH: process.env.PATH ?? '',
      NODE_ENV: 'production',
      PAYMENTS_BASE_URL: simUrl,
      PAYMENTS_API_KEY: 'image-key',
      DATABASE_URL: urlFor(db),
      REDIS_URL,
      PAYSYNC_QUEUE_PREFIX: prefix,
      EXPORT_DIR: exportDir,
      METRICS_PORT: String(metricsPort),
      LOG_LEVEL: 'warn',
    };
    stops.push(async () => {
      const admin = new pg.Client({ connectionString: maintenanceUrl(urlFor(db)) });
      await admin.connect();
      await admin.query(`DROP DATABASE IF EXISTS ${admin.escapeIdentifier(db)} WITH (FORCE)`);
      await admin.end();
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length) await redis.del(...keys);
      await redis.quit();
    });

    const migrated = await run(...asUser([entry, 'migrate']), { cwd: copy, env });
    expect({ code: migrated.code, stderr: migrated.stderr }).toMatchObject({ code: 0 });

    const worker = start(...asUser([entry]), { cwd: copy, env });
    stops.push(() => worker.stop());
    // The HEALTHCHECK's own command, as Docker runs it, until it passes (the worker is starting).
    let health = await run(...asUser(['node', 'docker/healthcheck.mjs']), { cwd: copy, env });
    for (let i = 0; health.code !== 0 && i < 100; i++) {
      await new Promise((r) => setTimeout(r, 300));
      health = await run(...asUser(['node', 'docker/healthcheck.mjs']), { cwd: copy, env });
    }
    expect({ code: health.code, stderr: health.stderr }).toEqual({ code: 0, stderr: '' });

    const today = new Date().toISOString().slice(0, 10);
    const from = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
    const backfill = await run(...asUser([entry, 'backfill', '--from', from, '--to', today, '--wait']), {
      cwd: copy,
      env,
    });
    expect({ code: backfill.code, stderr: backfill.code === 0 ? '' : backfill.stderr }).toEqual({
      code: 0,
      stderr: '',
    });
    const pool = new pg.Pool({ connectionString: urlFor(db) });
    const { rows } = await pool.query<{ n: string }>('SELECT count(*) AS n FROM reporting.payments');
    await pool.end();
    expect(Number(rows[0]?.n)).toBeGreaterThan(0);

    // `docker stop` signals the entrypoint's process, which is paysync itself (exec): it drains, exits 0.
    // (runuser, standing in for the image's USER, is its parent here: the signal goes to its child.)
    const paysyncPid =
      process.getuid?.() === 0
        ? Number(execFileSync('pgrep', ['-P', String(worker.child.pid)], { encoding: 'utf8' }).trim())
        : (worker.child.pid as number);
    process.kill(paysyncPid, 'SIGTERM');
    expect(await worker.exited).toBe(0);
  }, 600_000);
});
