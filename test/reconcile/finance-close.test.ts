/**
 * Finance closes a day: `paysync signoff` of a final day (refused for today and for a day without a pack),
 * `paysync verify` clean, after one byte appended to payments.csv (names the file) and after one amount
 * changed in reporting.payments (names the record, old and new); a restatement after sign-off shown by
 * status, the status page's calendar, the metric, the new manifest and the workbook, cleared by a new
 * sign-off; a revocation; sign-offs that cannot be edited or deleted; and the records digest recomputed by
 * exactly the SQL and sha256sum that docs/finance.md gives. Real PostgreSQL, files, simulator and CLI.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { appendFile, readFile, rm, truncate } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import ExcelJS from 'exceljs';
import { exportDay } from '../../src/reconcile/export-day.js';
import type { Manifest } from '../../src/reconcile/manifest.js';
import { reconcileDay } from '../../src/reconcile/reconcile.js';
import { localDayOf } from '../../src/sync/windows.js';
import { harnessEnv, runCli } from '../helpers/cli-run.js';
import { csvObjects, syncAll, tempExportDir } from '../helpers/export.js';
import { httpGet, startOpsStack, type OpsStack } from '../helpers/ops.js';
import { middayBefore, startHarness, type Harness } from '../helpers/sync-harness.js';

const ZONE = 'Africa/Porto-Novo';
const ROOT = resolve(import.meta.dirname, '../..');
let h: Harness;
let stack: OpsStack;
let exportDir: string;
let day: string;
let env: Record<string, string>;

const read = async (...path: string[]) => readFile(join(exportDir, day, ...path));
const manifest = async (...path: string[]) => JSON.parse((await read(...path)).toString('utf8')) as Manifest;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const cli = (...args: string[]) => runCli(args, env);

beforeAll(async () => {
  exportDir = await tempExportDir();
  h = await startHarness({
    name: 'finance-close',
    sim: { days: 3, perDay: 40, now: middayBefore(ZONE) },
    // a short horizon: yesterday is final whatever the hour, by the CLI's wall clock too
    env: {
      REPORT_TIMEZONE: ZONE,
      EXPORT_DIR: exportDir,
      PAGE_SIZE: '100',
      SETTLE_HORIZON: '1h',
      METRICS_PORT: '0',
      DASHBOARD_PORT: '0',
    },
  });
  env = harnessEnv(h, { SETTLE_HORIZON: '1h' });
  await syncAll(h);
  day = localDayOf(new Date(h.sim.now().getTime() - 86_400_000), ZONE);
  expect((await reconcileDay(h.runtime, day)).mismatches).toBe(0);
  expect(await exportDay(h.runtime, day)).toMatchObject({ version: 1, state: 'final' });
  stack = await startOpsStack(h);
}, 120_000);

afterAll(async () => {
  await stack?.close();
  await h?.close();
  await rm(exportDir, { recursive: true, force: true });
});

describe('signoff refuses what cannot be closed', () => {
  it('today (not over, no final pack): exit 1, one line saying why', async () => {
    const today = localDayOf(h.sim.now(), ZONE);
    const r = await cli('signoff', '--day', today, '--by', 'Amina K.');
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([
      `paysync signoff: ${today} has no pack: run \`paysync export --day ${today}\` first`,
    ]);
    await exportDay(h.runtime, today, { allowIncomplete: true });
    const incomplete = await cli('signoff', '--day', today, '--by', 'Amina K.');
    expect(incomplete.status).toBe(1);
    expect(incomplete.stderr).toMatch(/is incomplete, and only a final pack can be signed off/);
  });

  it('a day without a pack: exit 1', async () => {
    const r = await cli('signoff', '--day', '2026-01-05', '--by', 'Amina K.');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/2026-01-05 has no pack/);
  });

  it('bad usage: exit 2', async () => {
    expect((await cli('signoff', '--day', day)).status).toBe(2); // no --by
    expect((await cli('signoff', '--revoke', '--day', day, '--by', 'x')).status).toBe(2); // no --note
    expect((await cli('signoff', '--list', '--day', day)).status).toBe(2);
    expect((await cli('signoff', '--day', day, '--by', 'x', '--pending')).status).toBe(2);
  });
});

describe('a final day signed off and verified', () => {
  it('signoff records who, when, the version and its manifest SHA-256; the version files never change', async () => {
    const own = await read('v1', 'manifest.json');
    const r = await cli(
      'signoff',
      '--day',
      day,
      '--by',
      'Amina K.',
      '--note',
      'closed with the bank statement',
    );
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(`^${day}: v1 signed off by Amina K\\. at \\S+ \\(manifest SHA-256 ${sha256(own)}\\)\\n$`),
    );
    const { rows } = await h.runtime.pool.query(
      `SELECT version, signed_by, note, manifest_sha256, payments_digest FROM reporting.signoffs WHERE day = $1`,
      [day],
    );
    const v1 = await manifest('v1', 'manifest.json');
    expect(rows).toEqual([
      {
        version: 1,
        signed_by: 'Amina K.',
        note: 'closed with the bank statement',
        manifest_sha256: sha256(own),
        payments_digest: v1.digests!.payments,
      },
    ]);
    expect(sha256(await read('v1', 'manifest.json'))).toBe(sha256(own));
    expect((await manifest('manifest.json')).signoff).toMatchObject({
      state: 'signed',
      version: 1,
      signed: { by: 'Amina K.' },
    });
    const again = await cli('signoff', '--day', day, '--by', 'Bo');
    expect(again).toMatchObject({ status: 0 });
    expect(again.stdout).toMatch(/already signed off by Amina K\..*nothing recorded/);
  });

  it('verify: exit 0, "verified" and the version', async () => {
    const r = await cli('verify', '--day', day, '--all-versions');
    expect(r.stdout).toMatch(new RegExp(`^${day} v1 \\(final\\): verified`));
    expect(r.status).toBe(0);
  });

  it('the records digest recomputed by the SQL and sha256sum in docs/finance.md equals the manifest', async () => {
    const docs = await readFile(join(ROOT, 'docs/finance.md'), 'utf8');
    const section = docs.slice(docs.indexOf('### Recomputing the records digest'));
    const script = /```sh\n([\s\S]*?)```/.exec(section)?.[1];
    expect(script).toBeDefined();
    const { digests, totals } = await manifest('manifest.json');
    for (const table of ['payments', 'transfers'] as const) {
      const out = await new Promise<string>((ok, fail) =>
        execFile(
          'bash',
          ['-c', script!],
          {
            env: { PATH: process.env.PATH ?? '', DATABASE_URL: h.databaseUrl, DAY: day, ZONE, TABLE: table },
          },
          (error, stdout, stderr) => (error ? fail(new Error(stderr)) : ok(stdout)),
        ),
      );
      expect(totals[table].records).toBeGreaterThan(0);
      expect(out.trim()).toBe(`${digests![table]}  -`);
    }
  });
});

describe('verify names what changed', () => {
  it('one byte appended to payments.csv: exit 1 naming the file', async () => {
    const path = join(exportDir, day, 'v1', 'payments.csv');
    const size = (await read('v1', 'payments.csv')).length;
    await appendFile(path, 'x');
    try {
      const r = await cli('verify', '--day', day);
      expect(r.status).toBe(1);
      expect(r.stdout).toContain(`${path}: changed (SHA-256`);
    } finally {
      await truncate(path, size);
    }
  });

  it('one amount changed in reporting.payments: exit 1 naming the record, with the old and new amount', async () => {
    const v1 = await manifest('v1', 'manifest.json');
    const { id, amount: old } = csvObjects((await read('v1', 'payments.csv')).toString('utf8'))[0]!;
    const { rows } = await h.runtime.pool.query<{ amount: string }>(
      `UPDATE reporting.payments SET amount = amount + 1 WHERE id = $1 RETURNING amount::text AS amount`,
      [id],
    );
    const amount = rows[0]!.amount;
    expect(v1.files.payments.rows).toBeGreaterThan(0);
    const r = await cli('verify', '--day', day);
    expect(r.status).toBe(1);
    expect(r.stdout).toContain(`payments ${id}: amount ${old} → ${amount} (pack → warehouse)`);
    expect(r.stdout).toMatch(
      /payments records digest: v1 says [0-9a-f]{64}, the warehouse now gives [0-9a-f]{64}/,
    );
  });
});

describe('a restatement after sign-off', () => {
  it('is shown everywhere, and a new sign-off clears it', async () => {
    const before = await cli('status');
    const restated = await exportDay(h.runtime, day);
    expect(restated).toMatchObject({ version: 2, restated: true, signedBefore: 1 });

    const v2 = await manifest('v2', 'manifest.json');
    expect(v2.restatedAfterSignoff).toMatchObject({ signed: { version: 1, by: 'Amina K.' } });
    expect(v2.restatedAfterSignoff!.changes!.changed.count).toBe(1);
    expect((await manifest('manifest.json')).signoff).toMatchObject({
      state: 'restated after sign-off',
      version: 2,
    });

    const status = await cli('status');
    expect(status.status).toBe(before.status); // finance's, not ops'
    expect(status.stdout).toMatch(
      new RegExp(
        `finance's attention[^\\n]*\\n  ${day}: restated after sign-off: v1 signed off by Amina K\\. at \\S+; v2 changed its records`,
      ),
    );
    const pending = await cli('signoff', '--list', '--pending');
    expect(pending.status).toBe(1);
    expect(pending.stdout).toMatch(new RegExp(`${day} +v2 +final +restated after sign-off`));

    const metrics = await httpGet(`${stack.ops.metricsUrl}/metrics`);
    expect(metrics.text).toContain(`paysync_restated_after_signoff{day="${day}"} 1`);
    const page = await httpGet(`${stack.ops.dashboardUrl}/status`);
    expect(page.text).toMatch(new RegExp(`data-day="${day}" data-state="restated"`));

    const book = new ExcelJS.Workbook();
    await book.xlsx.load((await read('v2', 'pack.xlsx')) as unknown as ArrayBuffer);
    const cells = JSON.stringify(book.getWorksheet('summary')!.getSheetValues());
    expect(cells).toContain('restated after sign-off');
    expect(cells).toContain(v2.digests!.payments);

    const signed = await cli('signoff', '--day', day, '--by', 'Bo');
    expect(signed.stdout).toMatch(new RegExp(`^${day}: v2 signed off by Bo`));
    expect((await cli('status')).stdout).not.toContain("finance's attention");
    expect((await cli('signoff', '--list', '--pending')).status).toBe(0);
    expect((await httpGet(`${stack.ops.metricsUrl}/metrics`)).text).not.toContain(
      `paysync_restated_after_signoff{day="${day}"}`,
    );
    expect((await httpGet(`${stack.ops.dashboardUrl}/status`)).text).not.toMatch(
      new RegExp(`data-day="${day}" data-state="restated"`),
    );
    expect((await manifest('manifest.json')).signoff).toMatchObject({ state: 'signed', version: 2 });
  });
});

describe('sign-offs are never deleted', () => {
  it('a revocation is recorded beside the sign-off it withdraws', async () => {
    const r = await cli(
      'signoff',
      '--revoke',
      '--day',
      day,
      '--by',
      'Amina K.',
      '--note',
      'signed the wrong day',
    );
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/the sign-off of v2 by Bo is revoked by Amina K\./);
    // the earlier sign-off (of v1) is in force again, and v2 changed v1's records
    const back = await cli('signoff', '--list', '--pending');
    expect(back.status).toBe(1);
    expect(back.stdout).toMatch(new RegExp(`${day} +v2 +final +restated after sign-off +v1 by Amina K\\.`));
    const second = await cli('signoff', '--revoke', '--day', day, '--by', 'Amina K.', '--note', 'v1 too');
    expect(second.stdout).toMatch(/the sign-off of v1 by Amina K\. is revoked/);
    const list = await cli('signoff', '--list', '--pending');
    expect(list.status).toBe(1);
    expect(list.stdout).toMatch(new RegExp(`${day} +v2 +final +revoked`));
    expect((await cli('signoff', '--revoke', '--day', day, '--by', 'x', '--note', 'y')).status).toBe(1);
    const { rows } = await h.runtime.pool.query(
      `SELECT (SELECT count(*) FROM reporting.signoffs)::int AS signoffs,
              (SELECT count(*) FROM reporting.signoff_revocations)::int AS revocations`,
    );
    expect(rows[0]).toEqual({ signoffs: 2, revocations: 2 });
  });

  it('UPDATE, DELETE and TRUNCATE are refused, even to the owner', async () => {
    for (const sql of [
      `UPDATE reporting.signoffs SET signed_by = 'someone else'`,
      `DELETE FROM reporting.signoffs`,
      `TRUNCATE reporting.signoffs CASCADE`,
      `DELETE FROM reporting.signoff_revocations`,
    ])
      await expect(h.runtime.pool.query(sql)).rejects.toThrow(/append-only/);
  });
});
