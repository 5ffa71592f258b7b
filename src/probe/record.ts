/**
 * One probe of one source, recorded: measured through the same per-source rate ceiling as the sync, stored
 * in Redis and reporting.probe_findings, compared with the previous probe. Used by `paysync probe` and by
 * the worker's probe job (at start and daily).
 */
import type { Source } from '../config/settings.js';
import type { Runtime } from '../sync/services.js';
import { createRateGate } from '../sync/rate-gate.js';
import type { Findings } from './findings.js';
import { recordProbe, type FindingChange } from './findings-store.js';
import { createProbeClient } from './probe-client.js';
import { probeSource } from './probe.js';

export interface ProbeReport {
  source: string;
  findings: Findings;
  previousProbedAt: string | null;
  changes: FindingChange[];
}

function clientFor(runtime: Runtime, source: Source) {
  const { settings } = runtime;
  const gate = createRateGate(runtime.redis, {
    prefix: settings.PAYSYNC_QUEUE_PREFIX,
    source: source.name,
    rps: settings.UPSTREAM_RPS,
  });
  return createProbeClient({
    source,
    timeoutMs: settings.UPSTREAM_TIMEOUT,
    retries: settings.UPSTREAM_RETRIES,
    beforeRequest: () => gate.acquire(),
    log: runtime.log,
  });
}

export async function probeAndRecord(runtime: Runtime, source: Source): Promise<ProbeReport> {
  const findings = await probeSource(clientFor(runtime, source));
  const deps = { redis: runtime.redis, pool: runtime.pool, prefix: runtime.settings.PAYSYNC_QUEUE_PREFIX };
  const { previous, changes } = await recordProbe(deps, source.name, findings);
  return { source: source.name, findings, previousProbedAt: previous?.probedAt ?? null, changes };
}
