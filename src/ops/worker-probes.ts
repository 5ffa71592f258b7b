/**
 * A worker's phase as its probes tell it: `starting` (waiting for Redis, PostgreSQL or the migrations,
 * each named with why), `taking jobs`, `draining` (SIGTERM: running jobs finish, no new one starts). The
 * probe server is up from the first moment of `paysync worker`, before any connection exists, so
 * liveness answers at once and readiness says what the start waits for; once the runtime is built the
 * readiness checks run against it (health.ts).
 */
import { checkReady, type HealthDeps, type HealthReport } from './health.js';

export type WorkerPhase = 'starting' | 'taking jobs' | 'draining';

export class WorkerProbes {
  private phase: WorkerPhase = 'starting';
  private waiting: string | null = null;
  private deps: HealthDeps | null = null;

  /** A fresh worker's probes start `starting`; `startedAlready` is for a stack built before its probes. */
  constructor(startedAlready?: HealthDeps) {
    if (startedAlready) {
      this.deps = startedAlready;
      this.phase = 'taking jobs';
    }
  }

  get current(): WorkerPhase {
    return this.phase;
  }

  /** Still starting: why the start waits now (one line naming what is missing). */
  waitingFor(reason: string): void {
    this.waiting = reason;
  }

  /** The runtime exists: readiness checks its Redis, PostgreSQL and migrations from now on. */
  attach(deps: HealthDeps): void {
    this.deps = deps;
  }

  takingJobs(): void {
    if (this.phase === 'starting') this.phase = 'taking jobs';
  }

  draining(): void {
    this.phase = 'draining';
  }

  /** Liveness: answering at all is the proof (see health.ts). */
  live(): HealthReport {
    return { ok: true, checks: { process: 'ok', worker: this.phase } };
  }

  async ready(): Promise<HealthReport> {
    const worker =
      this.phase === 'starting'
        ? `starting${this.waiting ? `: ${this.waiting}` : ''}`
        : this.phase === 'draining'
          ? 'draining: finishing running jobs, taking no new ones'
          : 'ok';
    if (!this.deps) return { ok: false, checks: { process: 'ok', worker } };
    const deps = this.deps;
    const report = await checkReady({ ...deps, ready: () => worker === 'ok' && (deps.ready?.() ?? true) });
    if (worker !== 'ok') report.checks.worker = worker;
    return report;
  }
}
