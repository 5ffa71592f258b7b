/** The workbook's cell rules, with no server: which amounts a spreadsheet shows exactly, and text it cannot carry. */
import { describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  amountCell,
  amountFormat,
  asCellValue,
  compactJsonText,
  exactNumber,
  MAX_CELL_TEXT,
  scaleOf,
  textCell,
  wallClockCell,
} from '../../src/reconcile/xlsx-cells.js';
import { fixZipEntryDates, ZipLayoutError } from '../../src/reconcile/xlsx-zip.js';

describe('exactNumber: a number only when the spreadsheet shows the same decimal', () => {
  it.each([
    ['3316506243.30', 2, 3316506243.3],
    ['1500', 0, 1500],
    ['1500', 2, 1500],
    ['0.01', 2, 0.01],
    ['-250.75', 2, -250.75],
    ['0.1', 1, 0.1],
    ['999999999999999', 0, 999999999999999], // 15 significant digits
    ['0.000000000000001', 15, 1e-15],
  ])('%s at %i decimals is the number %d', (decimal, decimals, n) => {
    expect(exactNumber(decimal, decimals)).toBe(n);
    expect(amountCell(decimal, decimals)).toEqual({ value: n });
  });

  it.each([
    ['9999999999999999', 0], // 16 significant digits: a spreadsheet shows 1E+16
    ['12345678901234567890.123456789', 9],
    ['1234567890123456.5', 1],
    ['0.125', 2], // more decimals than the column shows: it would be rounded on screen
    ['NaN', 2],
    ['Infinity', 0],
    ['1e5', 0],
    ['', 0],
  ])('%s at %i decimals stays text, flagged', (decimal, decimals) => {
    expect(exactNumber(decimal, decimals)).toBeNull();
    expect(amountCell(decimal, decimals)).toEqual({ value: decimal, flag: 'amount-as-text' });
  });

  it('formats and scales', () => {
    expect(amountFormat(0)).toBe('#,##0');
    expect(amountFormat(2)).toBe('#,##0.00');
    expect(scaleOf('1.500')).toBe(3);
    expect(scaleOf('7')).toBe(0);
    expect(amountCell(null, 2)).toEqual({ value: null });
  });
});

describe('textCell: exact text, or a visible stand-in, flagged', () => {
  it('keeps any text a workbook carries, formula-looking and unicode included', () => {
    for (const text of ['=1+1', ' =1+1', '+22997123456', 'crédit 日本語 💸', 'a\tb\nc', "'x", '_x0041_']) {
      expect(textCell(text)).toEqual({ value: text });
    }
    expect(textCell('')).toEqual({ value: null });
    expect(textCell(null)).toEqual({ value: null });
  });

  it('writes control characters and CR as \\uXXXX (XML cannot carry them; CR comes back as LF)', () => {
    expect(textCell('a\u0001b\r\nc\u007f\uffff')).toEqual({
      value: 'a\\u0001b\\u000D\nc\\u007F\\uFFFF',
      flag: 'text-escaped',
    });
  });

  it('cuts a text longer than a cell holds, never inside a character', () => {
    const cut = textCell('x'.repeat(MAX_CELL_TEXT + 10));
    expect(cut.flag).toBe('text-cut');
    expect(String(cut.value).length).toBe(MAX_CELL_TEXT);
    const emoji = textCell(`${'x'.repeat(MAX_CELL_TEXT - 2)}💸💸`);
    expect(String(emoji.value).endsWith('x…')).toBe(true); // the half emoji is dropped, not split
  });

  it('text with whitespace at either end goes as an inline string (LibreOffice trims plain ones)', () => {
    expect(asCellValue(' a')).toEqual({ richText: [{ text: ' a' }] });
    expect(asCellValue('a\n')).toEqual({ richText: [{ text: 'a\n' }] });
    expect(asCellValue('a b')).toBe('a b');
    expect(asCellValue(12)).toBe(12);
  });
});

describe('wallClockCell and compactJsonText', () => {
  it('a wall-clock text becomes a Date whose UTC fields are that wall clock, to the ms', () => {
    expect((wallClockCell('2024-03-10T00:00:00.123').value as Date).toISOString()).toBe(
      '2024-03-10T00:00:00.123Z',
    );
    expect(wallClockCell(null)).toEqual({ value: null });
  });

  it.each([
    ['{"a": 1, "b": [1, 2]}', '{"a":1,"b":[1,2]}'],
    ['{"note": "x: y, z \\" q"}', '{"note":"x: y, z \\" q"}'],
    ['{"big": 12345678901234567890.123456789}', '{"big":12345678901234567890.123456789}'],
  ])('compacts %s', (jsonb, compact) => {
    expect(compactJsonText(jsonb)).toBe(compact);
  });
});

describe('fixZipEntryDates', () => {
  it('refuses a file that is not a zip, with a code', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'paysync-zip-'));
    try {
      await writeFile(join(dir, 'x.xlsx'), 'not a zip at all');
      await expect(fixZipEntryDates(join(dir, 'x.xlsx'))).rejects.toBeInstanceOf(ZipLayoutError);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
