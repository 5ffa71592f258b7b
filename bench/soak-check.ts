/**
 * The crash soak's end checks, each returning what is wrong (empty: all good): the warehouse against the
 * simulator record by record, doubled rows, and a day's reconciliation pack as its manifest names it.
 */
import { createHash } from 'node:crypto';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Pool } from 'pg';
import type { RunningSimulator } from '../src/sim/types.js';

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const time = (value: unknown) => new Date(value as string).getTime();

/** Compares every stored row of a stream with the service's truth, field by field. */
function compare(
  truth: ReadonlyArray<Record<string, unknown>>,
  rows: ReadonlyArray<Record<string, unknown>>,
  fields: readonly string[],
  stream: string,
): string[] {
  const stored = new Map(rows.map((r) => [r.id as string, r]));
  const diffs: string[] = [];
  for (const t of truth) {
    const r = stored.get(t.id as string);
    stored.delete(t.id as string);
    if (!r) {
      diffs.push(`${stream} ${String(t.id)} missing`);
      continue;
    }
    for (const field of fields) {
      const expected =
        field === 'createdAt' || field === 'updatedAt'
          ? time(t[field])
          : field === 'extra_data'
            ? canonical(t[field])
            : field === 'amount'
              ? String(t[field])
              : t[field];
      const column = field === 'createdAt' ? 'created_at' : field === 'updatedAt' ? 'updated_at' : field;
      const value = r[column];
      const actual =
        column === 'created_at' || column === 'updated_at'
          ? time(value)
          : field === 'extra_data'
            ? canonical(value)
            : value;
      if (expected !== actual)
        diffs.push(`${stream} ${String(t.id)} ${field}: ${String(expected)} ≠ ${String(actual)}`);
    }
  }
  for (const id of stored.keys()) diffs.push(`${stream} ${id} is not in the service`);
  return diffs;
}

const PAYMENT_FIELDS = [
  'reference',
  'amount',
  'description',
  'status',
  'transaction_type',
  'phone',
  'service_mobile_code',
  'extra_data',
  'createdAt',
  'updatedAt',
  'organization_id',
  'api_key_id',
] as const;
const TRANSFER_FIELDS = [
  'reference',
  'amount',
  'name',
  'phone',
  'service_mobile_code',
  'status',
  'createdAt',
  'updatedAt',
] as const;

export async function warehouseDifferences(
  pool: Pool,
  sim: RunningSimulator,
  org: string,
): Promise<string[]> {
  const payments = await pool.query(
    `SELECT *, amount::text AS amount FROM reporting.payments WHERE source = 'default'`,
  );
  const transfers = await pool.query(
    `SELECT *, amount::text AS amount FROM reporting.transfers WHERE source = 'default'`,
  );
  const truthPayments = sim.payments(org) as unknown as Array<Record<string, unknown>>;
  const truthTransfers = sim.transfers(org) as unknown as Array<Record<string, unknown>>;
  return [
    ...compare(truthPayments, payments.rows, PAYMENT_FIELDS, 'payment'),
    ...compare(truthTransfers, transfers.rows, TRANSFER_FIELDS, 'transfer'),
  ];
}

/** Ids stored twice, and statuses recorded twice in a history (none can be, by the keys; checked anyway). */
export async function doubled(pool: Pool): Promise<string[]> {
  const { rows } = await pool.query<{ what: string }>(
    `SELECT 'payment ' || id AS what FROM reporting.payments GROUP BY id HAVING count(*) > 1
     UNION ALL SELECT 'transfer ' || id FROM reporting.transfers GROUP BY id HAVING count(*) > 1
     UNION ALL SELECT 'payment history ' || payment_id || ' ' || status FROM reporting.payment_status_history
       GROUP BY payment_id, status HAVING count(*) > 1`,
  );
  return rows.map((r) => `doubled ${r.what}`);
}

interface PackFile {
  path: string;
  sha256: string;
  rows: number;
}

/**
 * What a reader of the day's folder could get wrong: the top manifest missing or unreadable, a file it
 * names missing, temporary, or not matching its SHA-256; and the API key anywhere in the folder.
 * Also returns how many temporary leftovers lie in the folder (harmless while no manifest names them).
 */
export async function packProblems(
  dayDir: string,
  secret: string,
): Promise<{ problems: string[]; leftovers: number }> {
  const problems: string[] = [];
  let manifest: { files?: Record<string, PackFile> };
  try {
    manifest = JSON.parse(await readFile(join(dayDir, 'manifest.json'), 'utf8')) as typeof manifest;
  } catch (error) {
    return { problems: [`manifest.json unreadable: ${(error as Error).message}`], leftovers: 0 };
  }
  const files = Object.entries(manifest.files ?? {});
  if (files.length === 0) problems.push('manifest.json names no files');
  for (const [name, file] of files) {
    if (/\.tmp-|(^|\/)\.tmp/.test(file.path))
      problems.push(`${name}: the manifest names a temporary path ${file.path}`);
    try {
      const bytes = await readFile(join(dayDir, file.path));
      const sha = createHash('sha256').update(bytes).digest('hex');
      if (sha !== file.sha256)
        problems.push(`${name}: ${file.path} SHA-256 ${sha} ≠ manifest ${file.sha256}`);
    } catch (error) {
      problems.push(`${name}: ${file.path} unreadable: ${(error as Error).message}`);
    }
  }
  let leftovers = 0;
  for (const entry of await readdir(dayDir, { recursive: true, withFileTypes: true })) {
    if (entry.name.includes('.tmp-')) leftovers++;
    if (!entry.isFile()) continue;
    const text = await readFile(join(entry.parentPath, entry.name), 'utf8');
    if (text.includes(secret)) problems.push(`the API key appears in ${entry.name}`);
  }
  return { problems, leftovers };
}
