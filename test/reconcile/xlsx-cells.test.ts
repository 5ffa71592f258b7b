/**
 * The workbook's cell rules, with no server: which amounts a spreadsheet shows exactly and in which look,
 * the text it carries exactly (a carriage return included) or flags, and the records sheets' byte path
 * (xlsx-record-rows.ts) giving exactly the cells of the rules, whatever the text and wherever chunks end.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { DateTime } from 'luxon';
import {
  amountCell,
  amountFormat,
  amountLook,
  dateSerialText,
  groupedDecimal,
  isExactNumber,
  MAX_CELL_TEXT,
  textCell,
  wallClockCell,
  type Cell,
} from '../../src/reconcile/xlsx-cells.js';
import { compactJson } from '../../src/reconcile/pack-rejects.js';
import { RecordRowsTranscoder, type RecordColumnKind } from '../../src/reconcile/xlsx-record-rows.js';
import { SHEET_BREAK } from '../../src/reconcile/xlsx-row-bytes.js';
import { recordRowXml, xmlText } from '../../src/reconcile/xlsx-sheet.js';

describe('amounts: exact, one look per column', () => {
  it.each([
    ['3316506243.30', 2],
    ['1500', 0],
    ['1500.5', 1],
    ['0.05', 2],
    ['-250.75', 2],
    ['999999999999999', 0], // 15 significant digits
    ['101.01000000000000000000', 20], // 5 significant digits: a spreadsheet shows the zeros as zeros
    ['0.000000000000001', 15],
  ])('%s is a number shown at its own scale (%i decimals)', (decimal, scale) => {
    expect(isExactNumber(decimal)).toBe(true);
    expect(amountCell(decimal, 'number')).toEqual({ value: Number(decimal), scale, decimal });
  });

  it.each([
    ['9999999999999999'], // 16 significant digits: a spreadsheet would show 1E+16
    ['9007199255313891.11'],
    ['12345678901234567890.123456789'],
    ['0.0000000000000000000000000000001'], // 31 decimals: more than a number format shows
    ['NaN'],
    ['1e5'],
  ])('%s is not a number a spreadsheet shows exactly', (decimal) => {
    expect(isExactNumber(decimal)).toBe(false);
  });

  it('a column is numbers only when every amount in it is exact; otherwise all text, grouped', () => {
    expect(amountLook(['1500', '0.05', null])).toBe('number');
    expect(amountLook(['1500', '9007199255313891.11'])).toBe('text');
    expect(amountCell('9007199255313891.11', 'text')).toEqual({
      value: '9,007,199,255,313,891.11',
      amountText: true,
    });
    expect(amountCell('1500', 'text')).toEqual({ value: '1,500', amountText: true });
    expect(amountCell('-80395.000', 'text')).toEqual({ value: '-80,395.000', amountText: true });
    expect(amountCell('NaN', 'text')).toEqual({ value: 'NaN', amountText: true, flag: 'amount-as-text' });
    expect(amountCell(null, 'number')).toEqual({ value: null });
  });

  it('formats and separators', () => {
    expect(amountFormat(0)).toBe('#,##0');
    expect(amountFormat(3)).toBe('#,##0.000');
    expect(groupedDecimal('1234567')).toBe('1,234,567');
    expect(groupedDecimal('-123.4567')).toBe('-123.4567');
    expect(groupedDecimal('999')).toBe('999');
  });
});

describe('text: exact, or a visible stand-in, flagged', () => {
  it('keeps any text a workbook carries: formula-looking, unicode, CR, the escape syntax itself', () => {
    for (const text of [
      '=1+1',
      ' =1+1',
      '+22997123456',
      'crédit 日本語 💸',
      'a\tb\nc',
      'a\r\nb',
      "'x",
      '_x0041_',
    ]) {
      expect(textCell(text)).toEqual({ value: text });
    }
    expect(textCell('')).toEqual({ value: null });
    expect(textCell(null)).toEqual({ value: null });
  });

  it('a carriage return is written as the format escapes it, and a literal escape is escaped', () => {
    expect(xmlText('a\r\nb')).toBe('a_x000D_\nb');
    expect(xmlText('_x000D_ & <b>')).toBe('_x005F_x000D_ &amp; &lt;b&gt;');
    expect(xmlText('my_xyz _x12_ _x00e9_')).toBe('my_xyz _x12_ _x005F_x00e9_');
  });

  it('writes other control characters visibly (invisible in a cell, dropped by LibreOffice)', () => {
    expect(textCell('a\u0001b\r\nc\u007f\uffff')).toEqual({
      value: 'a\\u0001b\r\nc\\u007F\\uFFFF',
      flag: 'text-escaped',
    });
  });

  it('cuts a text longer than a cell holds, never inside a character or a stand-in', () => {
    const cut = textCell('x'.repeat(MAX_CELL_TEXT + 10));
    expect(cut.flag).toBe('text-cut');
    expect(String(cut.value).length).toBe(MAX_CELL_TEXT);
    const emoji = textCell(`${'x'.repeat(MAX_CELL_TEXT - 2)}💸💸`);
    expect(String(emoji.value).endsWith('x…')).toBe(true);
    const standIn = textCell(`${'x'.repeat(MAX_CELL_TEXT - 4)}\u0001`);
    expect(String(standIn.value).endsWith('x…')).toBe(true);
  });
});

describe('times and json', () => {
  it('a wall-clock text becomes a Date whose UTC fields are that wall clock, to the ms', () => {
    expect((wallClockCell('2024-03-10T00:00:00.123').value as Date).toISOString()).toBe(
      '2024-03-10T00:00:00.123Z',
    );
    expect(wallClockCell(null)).toEqual({ value: null });
  });

  it('a date serial reads back to the very millisecond', () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1970, 0, 1), max: Date.UTC(2200, 0, 1) }), (ms) => {
        const serial = Number(dateSerialText(ms));
        expect(Math.round((serial - 25_569) * 86_400_000)).toBe(ms);
      }),
    );
    expect(dateSerialText(Date.UTC(2024, 2, 10, 12))).toBe('45361.5000000000');
  });

  it.each([
    ['{"a": 1, "b": [1, 2]}', '{"a":1,"b":[1,2]}'],
    ['{"note": "x: y, z \\" q"}', '{"note":"x: y, z \\" q"}'],
    ['{"big": 12345678901234567890.123456789}', '{"big":12345678901234567890.123456789}'],
  ])('compacts %s', (jsonb, compact) => {
    expect(compactJson(jsonb)).toBe(compact);
  });
});

// ---- the byte path against the rules ----

const KINDS: RecordColumnKind[] = ['text', 'amount', 'json', 'time', 'text'];
const ZONE = 'Europe/Paris'; // two offsets a year: the byte path must find the right one for each instant

const chars = fc.oneof(
  fc.constantFrom(
    '\r',
    '\n',
    '\t',
    '\u0001',
    '\u001f',
    '\u007f',
    '\uffff',
    '\ufffe',
    '_',
    'x',
    'X',
    '0',
    'D',
  ),
  fc.constantFrom('&', '<', '>', '"', ',', ' ', 'é', '日', '💸', '_x000D_', '_x005F_', '=1+1'),
  fc.string({ minLength: 1, maxLength: 3 }),
);
const text = fc.oneof(
  { weight: 6, arbitrary: fc.array(chars, { maxLength: 12 }).map((a) => a.join('')) },
  { weight: 1, arbitrary: fc.constant('') },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.constantFrom(' ', 'x', '\u0001', '💸'),
        fc.integer({ min: MAX_CELL_TEXT - 8, max: MAX_CELL_TEXT + 8 }),
      )
      .map(([c, n]) => c.repeat(Math.ceil(n / c.length))),
  },
);
const amount = fc.oneof(
  fc
    .tuple(fc.boolean(), fc.stringMatching(/^(0|[1-9][0-9]{0,17})$/), fc.stringMatching(/^([0-9]{1,20})?$/))
    .map(([neg, int, frac]) => `${neg ? '-' : ''}${int}${frac ? `.${frac}` : ''}`),
  fc.constantFrom('NaN', '0', '1500.50'),
);
const json = fc.jsonValue({ maxDepth: 2 }).map((v) =>
  // PostgreSQL's jsonb text: a space after every `:` and `,` outside strings
  JSON.stringify(v).replace(/("(?:[^"\\]|\\.)*")|([:,])/g, (m, str: string | undefined) => str ?? `${m} `),
);
const instant = fc
  .integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2100, 0, 1) })
  .map((ms) => new Date(ms).toISOString());
const record = fc.tuple(text, amount, json, instant, text);

/** PostgreSQL's CSV of one field: quoted when it holds a comma, quote, CR or LF; NULL and '' empty. */
const csvField = (v: string) => (/[",\r\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);

function expectedRow(r: number, values: readonly string[], look: 'number' | 'text'): string {
  const cells: Cell[] = [];
  values.forEach((v, i) => {
    const kind = KINDS[i];
    if (kind === 'amount') cells.push(amountCell(v === '' ? null : v, look));
    else if (kind === 'json') cells.push(textCell(compactJson(v)));
    else if (kind === 'time') {
      const local = DateTime.fromISO(v, { zone: ZONE }).toFormat("yyyy-MM-dd'T'HH:mm:ss.SSS");
      cells.push(wallClockCell(local), textCell(v));
    } else cells.push(textCell(v));
  });
  return recordRowXml(r, cells);
}

function transcode(csv: Buffer, cuts: number[], maxRows = 1_048_576): Array<string | typeof SHEET_BREAK> {
  const t = new RecordRowsTranscoder({
    kinds: KINDS,
    look: 'number',
    offsetMinutes: (ms) => DateTime.fromMillis(ms, { zone: ZONE }).offset,
    maxRows,
  });
  return withLook(t, csv, cuts);
}

function withLook(t: RecordRowsTranscoder, csv: Buffer, cuts: number[]): Array<string | typeof SHEET_BREAK> {
  const out: Array<string | typeof SHEET_BREAK> = [];
  let from = 0;
  for (const at of [...cuts.map((c) => c % (csv.length + 1)).sort((a, b) => a - b), csv.length]) {
    for (const p of t.transcode(csv.subarray(from, at))) out.push(p === SHEET_BREAK ? p : p.toString('utf8'));
    from = at;
  }
  for (const p of t.finish()) out.push(p === SHEET_BREAK ? p : p.toString('utf8'));
  return out;
}

describe('records sheets: the byte path writes exactly the cells of the rules', () => {
  it('for any text, amount, jsonb and instant, and any chunking of the CSV', () => {
    fc.assert(
      fc.property(
        fc.array(record, { minLength: 1, maxLength: 6 }),
        fc.array(fc.nat(), { maxLength: 4 }),
        (rows, cuts) => {
          const csv = Buffer.from(
            `a,b,c,d,e\n${rows.map((r) => `${r.map(csvField).join(',')}\n`).join('')}`,
            'utf8',
          );
          const look = amountLook(rows.map((r) => r[1]));
          const t = new RecordRowsTranscoder({
            kinds: KINDS,
            look,
            offsetMinutes: (ms) => DateTime.fromMillis(ms, { zone: ZONE }).offset,
            maxRows: 1_048_576,
          });
          const written = withLook(t, csv, cuts).join('');
          expect(written).toBe(rows.map((r, i) => expectedRow(i + 2, r, look)).join(''));
          expect(t.rows).toBe(rows.length);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('counts flagged cells by reason', () => {
    const csv = Buffer.from(
      `a,b,c,d,e\nx\u0001,NaN,{},2024-03-10T00:00:00.000Z,${'y'.repeat(MAX_CELL_TEXT + 1)}\n`,
    );
    const t = new RecordRowsTranscoder({
      kinds: KINDS,
      look: 'number',
      offsetMinutes: () => 60,
      maxRows: 10,
    });
    withLook(t, csv, []);
    expect(t.flags).toEqual({ 'text-escaped': 1, 'amount-as-text': 1, 'text-cut': 1 });
  });

  it('a sheet full of rows breaks to the next, numbering from row 2 again', () => {
    const line = 'x,1,{},2024-03-10T00:00:00.000Z,y\n';
    const out = transcode(Buffer.from(`a,b,c,d,e\n${line.repeat(5)}`), [], 3);
    expect(out.filter((p) => p === SHEET_BREAK)).toHaveLength(2);
    const rows = out
      .filter((p): p is string => p !== SHEET_BREAK)
      .join('')
      .match(/<row r="\d+">/g);
    expect(rows).toEqual(['<row r="2">', '<row r="3">', '<row r="2">', '<row r="3">', '<row r="2">']);
  });

  it('refuses a record with the wrong number of fields', () => {
    expect(() => transcode(Buffer.from('a,b,c,d,e\nx,1\n'), [])).toThrow(/2 fields where 5 were expected/);
  });
});
