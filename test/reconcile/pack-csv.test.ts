/**
 * The records files are written by PostgreSQL's COPY and pack-csv.ts. Finance relies on their bytes not
 * changing for an unchanged day, so this checks them, on awkward records, against what the pack wrote
 * before: the same cells neutralised and compacted in JavaScript and formatted by csv-stringify. One
 * difference is deliberate: with `record_delimiter: 'windows'` csv-stringify quotes a field holding CRLF
 * but not one holding a lone CR or LF, which splits the row in a spreadsheet (RFC 4180 quotes every line
 * break). The reference sets `quote_record_delimiter: true`, as the summary writer now does.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { stringify } from 'csv-stringify/sync';
import { LosslessNumber } from 'lossless-json';
import copyStreams from 'pg-copy-streams';
import { neutralise } from '../../src/reconcile/csv-cells.js';
import { PackCsvTranscoder } from '../../src/reconcile/pack-csv.js';
import {
  PAYMENTS_FILE,
  packCsvColumns,
  recordsCopySql,
  TRANSFERS_FILE,
  type PackFile,
} from '../../src/reconcile/pack-query.js';
import { writeCsvFile } from '../../src/reconcile/pack-writer.js';
import { loadPage } from '../../src/warehouse/loader.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { at, makePayment, makeTransfer } from '../helpers/records.js';

/** How the pack compacted jsonb text before (kept here as the reference the new writer must equal). */
function compactJsonbText(text: string): string {
  let out = '';
  let inString = false;
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x20) {
      out += text.slice(from, i);
      from = i + 1;
    }
  }
  return out + text.slice(from);
}

const AWKWARD_TEXT = [
  ' =1+1', // formulas behind leading spaces (first: inside the chunk-cutting test's records)
  '   @cmd',
  ' +22997123456',
  '  ',
  ' =a, "b"', // quoted by PostgreSQL (comma, quotes), formula behind a space
  ' plain, "quoted"',
  '=SUM(A1)',
  '+33 1 23 45',
  '-5',
  '@cmd',
  '\tstarts with a tab',
  '\rstarts with CR',
  'a,b',
  'say "hi", then "bye"',
  'line 1\nline 2',
  'line 1\r\nline 2',
  'ends with a quote"',
  '"',
  '""',
  ',',
  '',
  'émoji 💸 and ü',
  'back\\slash',
  "'already quoted",
  ' leading and trailing ',
  'two  spaces',
];

const AWKWARD_JSON: Array<Record<string, unknown>> = [
  {},
  { note: 'x: y, z' },
  { q: 'he said "a": b, c' },
  { 'k\\': 'v, w' },
  { nested: { a: [1, 2, { b: 'c, d' }], e: [] } },
  { exact: new LosslessNumber('1500.50'), big: new LosslessNumber('12345678901234567890.123456789') },
  { tab: 'a\tb', ctrl: '\u0001', nl: 'x\ny' },
  { t: true, f: false, z: null, empty: '', spaces: '   ' },
  { '=formula': '=1+1', quote: '"', comma: ',' },
];

const PHONES = [null, '+22997123456', '+22997', '+1234567890123456', '', '=1', '+2250712345678'];

let db: TestDatabase;
let dir: string;
const START = at(0);
const END = at(24 * 60);

beforeAll(async () => {
  db = await createTestDatabase('pack_csv');
  dir = await mkdtemp(join(tmpdir(), 'paysync-pack-csv-'));
  const payments = AWKWARD_TEXT.flatMap((text, i) =>
    AWKWARD_JSON.map((extra, j) =>
      makePayment({
        id: `p${String(i).padStart(2, '0')}${j}${text.slice(0, 2)}`,
        reference: AWKWARD_TEXT[(i + j) % AWKWARD_TEXT.length] as string,
        description: text,
        phone: PHONES[(i + j) % PHONES.length] ?? null,
        service_mobile_code: j % 2 ? text : 'MTN_CM',
        extra_data: extra,
        organization_id: j % 3 ? '@org' : 'org_1',
        createdAt: at((i * AWKWARD_JSON.length + j) % 600), // some share a createdAt: ordered by id then
        updatedAt: at(700),
      }),
    ),
  );
  await loadPage(db.pool, {
    source: 's',
    stream: 'payments',
    organizationId: null,
    records: payments,
    rejects: [],
  });
  const transfers = AWKWARD_TEXT.map((text, i) =>
    makeTransfer({
      name: text,
      reference: `T${i}`,
      phone: '+22997123456',
      createdAt: at(i),
      updatedAt: at(800),
    }),
  );
  await loadPage(db.pool, {
    source: 's',
    stream: 'transfers',
    organizationId: 'o',
    records: transfers,
    rejects: [],
  });
});

afterAll(async () => {
  await db?.drop();
  await rm(dir, { recursive: true, force: true });
});

/** The file as the earlier writer made it: plain SELECT → neutralise/compact in JS → csv-stringify. */
async function reference(file: PackFile, exprs: string[], freeText: number[], json: number): Promise<Buffer> {
  const { rows } = await db.pool.query<unknown[]>({
    text: `SELECT ${exprs.join(', ')} FROM ${file.table} WHERE created_at >= $1 AND created_at < $2
           ORDER BY created_at, id COLLATE "C"`,
    values: [START, END],
    rowMode: 'array',
  });
  for (const row of rows) {
    for (const i of freeText) {
      const value = row[i] as string | null;
      row[i] = neutralise(i === json && value !== null ? compactJsonbText(value) : value);
    }
  }
  const header = file.columns.map((c) => c.header);
  const options = {
    header: true,
    columns: header,
    record_delimiter: 'windows',
    quote_record_delimiter: true,
  };
  return Buffer.from(stringify(rows, options), 'utf8');
}

const ISO = `'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'`;
const iso = (c: string) => `to_char(${c} AT TIME ZONE 'UTC', ${ISO})`;

async function written(file: PackFile): Promise<{ bytes: Buffer; rows: number; sha256: string }> {
  const client = await db.pool.connect();
  try {
    const path = join(dir, `${file.name}-${Date.now()}.csv`);
    const sql = recordsCopySql(file, client.escapeLiteral(START), client.escapeLiteral(END));
    const result = await writeCsvFile(client, { sql, columns: packCsvColumns(file) }, path);
    return { ...result, bytes: await readFile(path) };
  } finally {
    client.release();
  }
}

describe('records files written by COPY', () => {
  it('payments.csv is byte for byte what csv-stringify wrote from the same cells', async () => {
    const expected = await reference(
      PAYMENTS_FILE,
      [
        'id',
        'reference',
        'amount::text',
        'description',
        'status',
        'transaction_type',
        'phone',
        'service_mobile_code',
        'extra_data::text',
        iso('created_at'),
        iso('updated_at'),
        'organization_id',
        'api_key_id',
      ],
      [0, 1, 3, 4, 5, 6, 7, 8, 11, 12],
      8,
    );
    const got = await written(PAYMENTS_FILE);
    expect(got.rows).toBe(AWKWARD_TEXT.length * AWKWARD_JSON.length);
    expect(got.bytes.toString('utf8')).toBe(expected.toString('utf8'));
    expect(got.bytes.equals(expected)).toBe(true);
    // the awkward cases are really there: neutralised cells, a kept phone, an exact decimal, a quoted line break
    const text = got.bytes.toString('utf8');
    expect(text).toContain(`'=SUM(A1)`);
    expect(text).toContain(',+22997123456,');
    expect(text).toContain(`,'+22997,`); // five digits: too short for a phone number
    expect(text).toContain('""exact"":1500.50');
    expect(text).toContain('"line 1\nline 2"');
    expect(text).toContain(`"'\rstarts with CR"`);
    expect(text).toContain(`,' =1+1,`);
    expect(text).toContain(`,'   @cmd,`);
    expect(text).toContain(`,' +22997123456,`);
    expect(text).toContain(`,"' =a, ""b""",`);
    expect(text).toContain(`," plain, ""quoted""",`);
  });

  it('transfers.csv likewise, and an empty day is the header alone', async () => {
    const expected = await reference(
      TRANSFERS_FILE,
      [
        'id',
        'reference',
        'amount::text',
        'name',
        'phone',
        'service_mobile_code',
        'status',
        iso('created_at'),
        iso('updated_at'),
      ],
      [0, 1, 3, 4, 5, 6],
      -1,
    );
    const got = await written(TRANSFERS_FILE);
    expect(got.rows).toBe(AWKWARD_TEXT.length);
    expect(got.bytes.equals(expected)).toBe(true);

    const client = await db.pool.connect();
    try {
      const path = join(dir, 'empty.csv');
      const none = client.escapeLiteral('2000-01-01T00:00:00Z');
      const sql = recordsCopySql(TRANSFERS_FILE, none, none);
      const empty = await writeCsvFile(client, { sql, columns: packCsvColumns(TRANSFERS_FILE) }, path);
      expect(empty.rows).toBe(0);
      expect(await readFile(path, 'utf8')).toBe(
        `${TRANSFERS_FILE.columns.map((c) => c.header).join(',')}\r\n`,
      );
    } finally {
      client.release();
    }
  });
});

describe('PackCsvTranscoder', () => {
  it('gives the same bytes wherever the input is cut into chunks', async () => {
    const client = await db.pool.connect();
    const parts: Buffer[] = [];
    try {
      const sql = recordsCopySql(PAYMENTS_FILE, client.escapeLiteral(START), client.escapeLiteral(at(30)));
      await pipeline(
        client.query(copyStreams.to(sql)),
        new Writable({
          write(chunk: Buffer, _enc, done) {
            parts.push(chunk);
            done();
          },
        }),
      );
    } finally {
      client.release();
    }
    const raw = Buffer.concat(parts);
    const whole = (() => {
      const t = new PackCsvTranscoder(packCsvColumns(PAYMENTS_FILE));
      return Buffer.concat([t.transcode(raw), t.finish()]);
    })();
    expect(whole.includes('\r\n')).toBe(true);
    for (let cut = 1; cut < raw.length; cut += 7) {
      const t = new PackCsvTranscoder(packCsvColumns(PAYMENTS_FILE));
      const out = Buffer.concat([
        t.transcode(raw.subarray(0, cut)),
        t.transcode(raw.subarray(cut)),
        t.finish(),
      ]);
      expect(out.equals(whole)).toBe(true);
    }
    const t = new PackCsvTranscoder(packCsvColumns(PAYMENTS_FILE));
    const bytes: Buffer[] = [];
    for (let i = 0; i < raw.length; i++) bytes.push(t.transcode(raw.subarray(i, i + 1)));
    bytes.push(t.finish());
    expect(Buffer.concat(bytes).equals(whole)).toBe(true);
  });

  it.each([
    ['{}', '{}'],
    ['{"a": 1, "b": [1, 2]}', '{"a":1,"b":[1,2]}'],
    ['{"note": "ligne 1\\nligne 2, \\"quoted\\": yes"}', '{"note":"ligne 1\\nligne 2, \\"quoted\\": yes"}'],
    ['{"big": 12345678901234567890.123456789}', '{"big":12345678901234567890.123456789}'],
    ['{"k\\\\": "v, w"}', '{"k\\\\":"v, w"}'],
  ])('compacts jsonb text %s to %s (exact numbers, strings untouched)', (jsonb, compact) => {
    const csvField = (s: string) => `"${s.replace(/"/g, '""')}"`;
    const t = new PackCsvTranscoder({ freeText: [0, 1, 2], json: 1 });
    const out = t.transcode(Buffer.from(`x,${csvField(jsonb)},y\n`));
    expect(out.toString()).toBe(`x,${csvField(compact)},y\r\n`);
    expect(t.records).toBe(1);
  });
});
