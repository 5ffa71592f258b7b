/**
 * The Kubernetes manifests of deploy/kubernetes/, proved without a cluster:
 * - every document parses as YAML and validates against the Kubernetes API schemas (kubernetes-models:
 *   types, required fields, formats such as resource quantities); those schemas, like the API's OpenAPI
 *   document, do not refuse unknown fields, so every field paysync relies on is read by name below and a
 *   misspelt one fails there;
 * - kustomization.yaml lists every manifest of the folder, and nothing else;
 * - the worker: liveness on /livez and readiness on /readyz on the port METRICS_PORT serves, a termination
 *   grace above its DRAIN_TIMEOUT, requests and a memory limit, the API key (and every address that may
 *   hold a password) from the Secret, never a literal; the settings it sets are valid paysync settings
 *   (parsed by paysync's own schema); the Service selects its pods and targets ports they declare;
 * - the migrate Job runs `paysync migrate` with DATABASE_URL from the Secret;
 * - both run as the image's non-root user (the Dockerfile's USER node, uid 1000).
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { ConfigMap, Namespace, PersistentVolumeClaim, Service } from 'kubernetes-models/v1';
import type { IContainer } from 'kubernetes-models/v1/Container';
import type { IPodSpec } from 'kubernetes-models/v1/PodSpec';
import { parseDuration } from '../../src/config/duration.js';
import { parseSettings } from '../../src/config/settings.js';

const ROOT = resolve(import.meta.dirname, '../..');
const DIR = join(ROOT, 'deploy/kubernetes');

/** Each kind the folder may hold, by apiVersion/kind, with its model (whose validate() runs the schema). */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  'v1/Namespace': Namespace,
  'v1/ConfigMap': ConfigMap,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
};

interface Manifest {
  file: string;
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

function parseFile(file: string): unknown[] {
  const docs = parseAllDocuments(readFileSync(join(DIR, file), 'utf8'));
  const list = Array.isArray(docs) ? docs : [docs];
  return list.map((doc) => {
    expect({ file, errors: doc.errors.map((e) => e.message) }).toEqual({ file, errors: [] });
    return doc.toJS() as unknown;
  });
}

const manifestFiles = () =>
  readdirSync(DIR)
    .filter((f) => /\.ya?ml$/.test(f) && f !== 'kustomization.yaml')
    .sort();

function manifests(): Manifest[] {
  return manifestFiles().flatMap((file) =>
    parseFile(file).map((doc) => ({ file, ...(doc as Omit<Manifest, 'file'>) }) as Manifest),
  );
}

function one(kind: string, name: string): Manifest {
  const found = manifests().filter((m) => m.kind === kind && m.metadata.name === name);
  expect({ kind, name, count: found.length }).toEqual({ kind, name, count: 1 });
  return found[0] as Manifest;
}

/** A schema problem of `data` as `kind`, or null when it validates. */
function schemaProblem(kind: string, data: unknown): string | null {
  const Model = MODELS[kind];
  if (!Model) return `no schema known for ${kind}`;
  try {
    new Model(data as never).validate();
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

const podSpec = (m: Manifest) => (m.spec as { template: { spec: IPodSpec } }).template.spec;
const container = (m: Manifest, name: string): IContainer => {
  const found = podSpec(m).containers.find((c) => c.name === name);
  if (!found) throw new Error(`${m.kind} ${m.metadata.name} has no container ${name}`);
  return found;
};
/** The container's literal env values (secret references apart). */
const literalEnv = (c: IContainer) =>
  Object.fromEntries(
    (c.env ?? []).filter((e) => e.value !== undefined).map((e) => [e.name, e.value as string]),
  );
const secretEnv = (c: IContainer) =>
  Object.fromEntries(
    (c.env ?? [])
      .filter((e) => e.valueFrom?.secretKeyRef)
      .map((e) => [e.name, { secret: e.valueFrom?.secretKeyRef?.name, key: e.valueFrom?.secretKeyRef?.key }]),
  );
const configMapData = () => one('ConfigMap', 'paysync').data as Record<string, string>;

describe('deploy/kubernetes', () => {
  it('every document is valid YAML and valid against the Kubernetes schemas', () => {
    const all = manifests();
    expect(all.length).toBeGreaterThanOrEqual(6);
    for (const m of all) {
      const kind = `${m.apiVersion}/${m.kind}`;
      expect({ file: m.file, kind, problem: schemaProblem(kind, m) }).toEqual({
        file: m.file,
        kind,
        problem: null,
      });
    }
  });

  it('the schema check refuses what a cluster would refuse (it can fail)', () => {
    const worker = one('Deployment', 'paysync-worker');
    const spoilt = structuredClone(worker) as Manifest;
    const spec = podSpec(spoilt) as unknown as Record<string, unknown>;
    spec.terminationGracePeriodSeconds = '90s';
    (
      spec.containers as Array<{ resources: { limits: Record<string, string> } }>
    )[0]!.resources.limits.memory = 'plenty';
    const problem = schemaProblem('apps/v1/Deployment', spoilt) ?? '';
    expect(problem).toMatch(/terminationGracePeriodSeconds must be integer/);
    expect(problem).toMatch(/limits\/memory must match format "quantity"/);
    expect(schemaProblem('batch/v1/Job', { metadata: { name: 'x' }, spec: {} })).toMatch(/template/);
  });

  it('kustomization.yaml applies every manifest of the folder', () => {
    const [kustomization] = parseFile('kustomization.yaml') as Array<{
      resources: string[];
      namespace: string;
    }>;
    expect([...(kustomization?.resources ?? [])].sort()).toEqual(manifestFiles());
    expect(kustomization?.namespace).toBe(one('Namespace', 'paysync').metadata.name);
  });

  it('the worker: probes on the metrics port, grace above the drain bound, resources, the key from the Secret', () => {
    const worker = one('Deployment', 'paysync-worker');
    const spec = podSpec(worker);
    const c = container(worker, 'worker');
    expect(c.args).toEqual(['worker']);
    const env = literalEnv(c);
    const metricsPort = c.ports?.find((p) => p.name === 'metrics')?.containerPort;
    expect(metricsPort).toBe(Number(env.METRICS_PORT));
    expect(env.METRICS_HOST).toBe('0.0.0.0');
    expect(c.livenessProbe?.httpGet).toEqual({ path: '/livez', port: 'metrics' });
    expect(c.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'metrics' });
    // readiness checks each dependency within 2 s, all at once: the probe waits longer than that
    expect(c.readinessProbe?.timeoutSeconds).toBeGreaterThan(2);

    const drainMs = parseDuration(env.DRAIN_TIMEOUT ?? '25s') as number;
    expect(drainMs).toBeGreaterThan(0);
    expect((spec.terminationGracePeriodSeconds ?? 30) * 1000).toBeGreaterThanOrEqual(drainMs + 10_000);

    expect(c.resources?.requests).toEqual({ cpu: expect.any(String), memory: expect.any(String) });
    expect(c.resources?.limits?.memory).toEqual(expect.any(String));

    // secrets (and addresses that may hold passwords) come from the Secret, never as literals
    for (const name of ['PAYMENTS_API_KEY', 'DATABASE_URL', 'REDIS_URL', 'DASHBOARD_TOKEN']) {
      expect({ name, ref: secretEnv(c)[name] }).toEqual({ name, ref: { secret: 'paysync', key: name } });
      expect({ name, literal: env[name] ?? configMapData()[name] }).toEqual({ name, literal: undefined });
    }
    expect(c.envFrom).toEqual([{ configMapRef: { name: 'paysync' } }]);
  });

  it('the settings the worker and the migrate job set are valid paysync settings', () => {
    const placeholders = {
      PAYMENTS_API_KEY: 'sk_placeholder_for_the_test',
      DATABASE_URL: 'postgres://paysync:secret@postgres.example:5432/paysync',
      REDIS_URL: 'redis://:secret@redis.example:6379',
      DASHBOARD_TOKEN: 'placeholder-token',
    };
    for (const [kind, name, containerName] of [
      ['Deployment', 'paysync-worker', 'worker'],
      ['Job', 'paysync-migrate', 'migrate'],
    ] as const) {
      const env: Record<string, string> = {
        ...configMapData(),
        ...literalEnv(container(one(kind, name), containerName)),
        ...placeholders,
      };
      const settings = parseSettings(env);
      expect(settings.sources.map((s) => s.baseUrl)).toEqual([configMapData().PAYMENTS_BASE_URL]);
      if (kind === 'Deployment') {
        expect(settings.DRAIN_TIMEOUT).toBe(parseDuration(env.DRAIN_TIMEOUT as string));
        // the Service's names are answered by the port gate
        expect(settings.OPS_ALLOWED_HOSTS).toEqual(
          expect.arrayContaining(['paysync-worker', 'paysync-worker.paysync.svc.cluster.local']),
        );
      }
    }
  });

  it('the migrate Job runs `paysync migrate` with the database from the Secret', () => {
    const job = one('Job', 'paysync-migrate');
    const c = container(job, 'migrate');
    expect(c.args).toEqual(['migrate']);
    expect(secretEnv(c).DATABASE_URL).toEqual({ secret: 'paysync', key: 'DATABASE_URL' });
    expect(podSpec(job).restartPolicy).toBe('Never');
    expect((job.spec as { backoffLimit: number }).backoffLimit).toBeGreaterThan(0);
  });

  it('the Service selects the worker pods and targets ports they declare', () => {
    const service = one('Service', 'paysync-worker');
    const worker = one('Deployment', 'paysync-worker');
    const podLabels = (worker.spec as { template: { metadata: { labels: Record<string, string> } } }).template
      .metadata.labels;
    const spec = service.spec as { selector: Record<string, string>; ports: Array<{ targetPort: string }> };
    expect(podLabels).toMatchObject(spec.selector);
    expect(
      (worker.spec as { selector: { matchLabels: Record<string, string> } }).selector.matchLabels,
    ).toEqual(spec.selector);
    const declared = (container(worker, 'worker').ports ?? []).map((p) => p.name);
    expect(spec.ports.map((p) => p.targetPort).sort()).toEqual(['dashboard', 'metrics']);
    for (const p of spec.ports) expect(declared).toContain(p.targetPort);
    // the exports volume the pods mount is the claim the folder defines
    const claim = podSpec(worker).volumes?.find((v) => v.name === 'exports')?.persistentVolumeClaim
      ?.claimName;
    expect(claim).toBe(one('PersistentVolumeClaim', 'paysync-exports').metadata.name);
  });

  it("both run as the image's non-root user", () => {
    const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^USER node$/m); // uid 1000 in node:* images
    for (const [kind, name] of [
      ['Deployment', 'paysync-worker'],
      ['Job', 'paysync-migrate'],
    ] as const) {
      const spec = podSpec(one(kind, name));
      expect({ kind, ctx: spec.securityContext }).toMatchObject({
        kind,
        ctx: { runAsNonRoot: true, runAsUser: 1000 },
      });
      for (const c of spec.containers)
        expect({ kind, ctx: c.securityContext }).toMatchObject({
          kind,
          ctx: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true },
        });
    }
  });
});
