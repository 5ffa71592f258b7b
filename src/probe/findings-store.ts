/**
 * Where probe findings live, and what changed since the last probe.
 * - Redis `${prefix}:probe:${source}`: the latest Findings as JSON, for the worker to read cheaply.
 * - `reporting.probe_findings` (sql/008): every probe with its changes, the durable history; the previous
 *   findings are read from it when Redis has lost them (Redis is fast, Postgres is durable).
 * The warehouse row is written first, so Redis never holds findings the history lacks.
 */
import type { Redis } from 'ioredis';
import type { Pool } from 'pg';
import { PaysyncError } from '../errors.js';
import { describeFindings, parseStoredFindings, type Findings } from './findings.js';

export interface FindingChange {
  finding: string;
  label: string;
  before: string;
  after: string;
}

export interface FindingsStoreDeps {
  redis: Redis;
  pool: Pool;
  /** PAYSYNC_QUEUE_PREFIX */
  prefix: string;
}

export function probeKey(prefix: string, source: string): string {
  return `${prefix}:probe:${source}`;
}

/**
 * The findings that differ between two probes. Pure. A finding that is unknown on either side is not a
 * change: thin evidence on one day (no record on a whole second, too few records) says nothing about the
 * service having changed, and flagging it would bury the real changes in noise.
 */
export function compareFindings(previous: Findings | null, current: Findings): FindingChange[] {
  if (!previous) return [];
  const before = new Map(describeFindings(previous).map((line) => [line.key, line.value]));
  return describeFindings(current).flatMap((line) => {
    const old = before.get(line.key);
    if (!line.compared || old === null || old === undefined || line.value === null || old === line.value) {
      return [];
    }
    return [{ finding: line.key, label: line.label, before: old, after: line.value }];
  });
}

function notMigrated(error: unknown): never {
  if ((error as { code?: string }).code === '42P01') {
    throw new PaysyncError(
      'NOT_MIGRATED',
      'reporting.probe_findings does not exist: run `paysync migrate` first',
      { cause: error },
    );
  }
  throw error;
}

async function latestFromWarehouse(pool: Pool, source: string): Promise<Findings | null> {
  const { rows } = await pool
    .query<{ findings: unknown }>(
      'SELECT findings FROM reporting.probe_findings WHERE source = $1 ORDER BY probed_at DESC LIMIT 1',
      [source],
    )
    .catch(notMigrated);
  return rows[0] ? parseStoredFindings(rows[0].findings) : null;
}

/** The last probe's findings: Redis first, else the warehouse; null when never probed. */
export async function loadLatestFindings(deps: FindingsStoreDeps, source: string): Promise<Findings | null> {
  const text = await deps.redis.get(probeKey(deps.prefix, source));
  if (text !== null) {
    try {
      const found = parseStoredFindings(JSON.parse(text));
      if (found) return found;
    } catch {
      // an unreadable copy: fall through to the durable one
    }
  }
  return latestFromWarehouse(deps.pool, source);
}

export async function saveFindings(
  deps: FindingsStoreDeps,
  source: string,
  findings: Findings,
  changes: readonly FindingChange[],
): Promise<void> {
  await deps.pool
    .query(
      `INSERT INTO reporting.probe_findings (source, probed_at, findings, changes) VALUES ($1, $2, $3, $4)
       ON CONFLICT (source, probed_at) DO UPDATE SET findings = EXCLUDED.findings, changes = EXCLUDED.changes`,
      [source, findings.probedAt, JSON.stringify(findings), JSON.stringify(changes)],
    )
    .catch(notMigrated);
  await deps.redis.set(probeKey(deps.prefix, source), JSON.stringify(findings));
}

/** Compares with the last probe of the source, stores the new findings, and returns what changed. */
export async function recordProbe(
  deps: FindingsStoreDeps,
  source: string,
  findings: Findings,
): Promise<{ previous: Findings | null; changes: FindingChange[] }> {
  const previous = await loadLatestFindings(deps, source);
  const changes = compareFindings(previous, findings);
  await saveFindings(deps, source, findings, changes);
  return { previous, changes };
}
