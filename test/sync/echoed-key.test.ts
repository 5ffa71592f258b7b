/**
 * A service that echoes the caller's API key in its records (as `api_key_id`, inside `description` and
 * `extra_data`, in fields the interface does not list, base64-encoded or as a piece of it, and in records
 * that are quarantined for another reason): after a sync over real HTTP and the day's export, no run of 8
 * of the key's characters is in any warehouse table, in payments.csv, rejects.csv or pack.xlsx. Each
 * record that held it is stored with the key replaced by the marker and noted in the rejects with the
 * reason "the service echoed the API key", its raw copy scrubbed the same way.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { readFile, readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { exportDay } from '../../src/reconcile/export-day.js';
import { SECRET_MARKER } from '../../src/scrub.js';
import { localDayOf } from '../../src/sync/windows.js';
import { ECHOED_KEY_REASON } from '../../src/warehouse/echoed-key.js';
import { loadPage } from '../../src/warehouse/loader.js';
import { keyRunsIn } from '../helpers/key-runs.js';
import { syncAll, tempExportDir } from '../helpers/export.js';
import { makePayment } from '../helpers/records.js';
import { startHarness, type Harness } from '../helpers/sync-harness.js';

let h: Harness;
let exportDir: string;

beforeAll(async () => {
  exportDir = await tempExportDir();
  h = await startHarness({
    name: 'echoed_key',
    sim: { days: 2, perDay: 30 },
    env: { EXPORT_DIR: exportDir },
  });
});
afterAll(async () => {
  await h?.close();
  await rm(exportDir, { recursive: true, force: true });
});

/** Every row of every table of the warehouse, as text. */
async function warehouseText(): Promise<string> {
  const { rows: tables } = await h.runtime.pool.query<{ t: string }>(
    `SELECT format('%I.%I', table_schema, table_name) AS t FROM information_schema.tables
      WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
  );
  const parts: string[] = [];
  for (const { t } of tables) {
    const { rows } = await h.runtime.pool.query<{ row: string }>(`SELECT x::text AS row FROM ${t} x`);
    parts.push(...rows.map((r) => r.row));
  }
  return parts.join('\n');
}

/** Every cell of every sheet of a workbook, as text. */
async function workbookText(path: string): Promise<string> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(path);
  const cells: string[] = [];
  wb.eachSheet((sheet) =>
    sheet.eachRow((row) => row.eachCell((cell) => cells.push(JSON.stringify(cell.value)))),
  );
  return cells.join('\n');
}

describe('the key echoed in records', () => {
  it('is in no table, CSV or workbook; every record that held it is stored scrubbed and noted in the rejects', async () => {
    const { key } = h;
    h.sim.setSwitches({
      echoKey: ['api_key_id', 'description', 'extra_data'],
      paymentExtraFields: {
        note: JSON.stringify(`token=${key};`),
        b64: JSON.stringify(Buffer.from(key).toString('base64')),
        piece: JSON.stringify(`…${key.slice(3, 15)}…`),
      },
      // some records also fail validation: their raw copies hold the key too
      fieldChanges: [{ stream: 'payments', field: 'status', to: 'null', rate: 0.2 }],
    });
    await syncAll(h);
    const pool = h.runtime.pool;

    const { rows: stored } = await pool.query<{
      id: string;
      api_key_id: string;
      description: string;
      api_key: string;
      unknown: Record<string, string>;
    }>(
      `SELECT id, api_key_id, description, extra_data->>'api_key' AS api_key, unknown_fields AS unknown
         FROM reporting.payments`,
    );
    expect(stored.length).toBeGreaterThan(20);
    for (const p of stored) {
      expect(p.api_key_id).toBe(SECRET_MARKER);
      expect(p.description.endsWith(`(key ${SECRET_MARKER})`)).toBe(true);
      expect(p.api_key).toBe(SECRET_MARKER);
      expect(p.unknown).toEqual({
        note: `token=${SECRET_MARKER};`,
        b64: expect.stringMatching(/^\[redacted\]=*$/), // the padding is not the key's
        piece: `…${SECRET_MARKER}…`,
      });
    }

    const { rows: rejects } = await pool.query<{ record_id: string; reason: string; raw: string }>(
      `SELECT record_id, reason, raw::text AS raw FROM reporting.sync_rejects WHERE stream = 'payments'`,
    );
    const noted = rejects.filter((r) => r.reason === ECHOED_KEY_REASON);
    expect(noted.map((r) => r.record_id).sort()).toEqual(stored.map((p) => p.id).sort());
    expect(noted.every((r) => r.raw.includes(SECRET_MARKER))).toBe(true);
    const invalid = rejects.filter((r) => r.reason !== ECHOED_KEY_REASON);
    expect(invalid.length).toBeGreaterThan(0); // quarantined for their status, raw scrubbed as well
    expect(invalid.every((r) => r.raw.includes(SECRET_MARKER))).toBe(true);

    const day = localDayOf(new Date(h.sim.now().getTime() - 86_400_000), 'UTC');
    const { dir } = await exportDay(h.runtime, day, { allowIncomplete: true, now: h.sim.now() });
    const csv = await readFile(join(dir, 'payments.csv'), 'utf8');
    expect(csv.split('\r\n').length).toBeGreaterThan(3);
    expect(csv).toContain(SECRET_MARKER);
    const files = await readdir(dir);
    const texts = [await warehouseText(), csv, await workbookText(join(dir, 'pack.xlsx'))];
    for (const name of files.filter((f) => f.endsWith('.csv') || f.endsWith('.json')))
      texts.push(await readFile(join(dir, name), 'utf8'));
    expect(texts.map((text) => keyRunsIn(text, key))).toEqual(texts.map(() => []));
    h.sim.setSwitches({ echoKey: [], paymentExtraFields: {}, fieldChanges: [] });
  }, 60_000);

  it('a record whose id holds the key is only quarantined, under a scrubbed id', async () => {
    const id = `pay_${h.key}`;
    const result = await loadPage(h.runtime.pool, {
      source: 'default',
      stream: 'payments',
      organizationId: null,
      records: [makePayment({ id }), makePayment({ id: 'pay_plain_neighbour' })],
      rejects: [],
    });
    expect(result).toMatchObject({ inserted: 1, rejects: 1 });
    const { rows } = await h.runtime.pool.query(
      `SELECT record_id, reason FROM reporting.sync_rejects
        WHERE reason = $1 AND record_id NOT IN (SELECT id FROM reporting.payments)`,
      [ECHOED_KEY_REASON],
    );
    expect(rows).toEqual([{ record_id: `pay_${SECRET_MARKER}`, reason: ECHOED_KEY_REASON }]);
    expect(keyRunsIn(await warehouseText(), h.key)).toEqual([]);
  });
});
