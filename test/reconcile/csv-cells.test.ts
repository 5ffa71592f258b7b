/** The pack's cell rules, with no server: formula text neutralised, phone numbers kept (jsonb compaction: pack-csv.test.ts). */
import { describe, expect, it } from '@jest/globals';
import {
  FORMULA_FIRST_CHARACTERS,
  isFormulaLike,
  neutralise,
  PHONE_DIGITS,
} from '../../src/reconcile/csv-cells.js';

describe('neutralise: spreadsheet formula injection (OWASP CSV injection)', () => {
  it.each([
    ['=HYPERLINK("http://x")', `'=HYPERLINK("http://x")`],
    ['+SUM(A1)', "'+SUM(A1)"],
    ['-2+3', "'-2+3"],
    ['@cmd', "'@cmd"],
    ['\tTabulation', "'\tTabulation"],
    ['\rfin', "'\rfin"],
    ['+229 97 00 00 00', "'+229 97 00 00 00"], // not a well-formed phone: spaces
    ['+22997', "'+22997"], // too short to be a phone number
    ['+1234567890123456', "'+1234567890123456"], // longer than E.164 allows
    [' =1+1', "' =1+1"], // a spreadsheet that trims spaces would run it
    ['    @SUM(A1)', "'    @SUM(A1)"],
    [' +22997123456', "' +22997123456"], // not a phone number as a whole cell
    ['  \tx', "'  \tx"],
  ])('%j becomes %j', (input, output) => {
    expect(isFormulaLike(input)).toBe(true);
    expect(neutralise(input)).toBe(output);
  });

  it.each([
    '+22997123456',
    '+2250712345678',
    'Paiement facture',
    'a=b',
    '',
    "'already",
    '{"a":1}',
    ' leading space',
    '   ',
    ' a =1',
    '\u00a0=1', // a no-break space is not trimmed as a space: the cell starts with text
  ])('%j stays as it is', (cell) => {
    expect(neutralise(cell)).toBe(cell);
  });

  it('writes null as the empty cell', () => {
    expect(neutralise(null)).toBe('');
  });
});

describe('the rule as constants (what pack-csv.ts applies to the bytes PostgreSQL writes)', () => {
  it('a cell is formula-like exactly when it starts with one of FORMULA_FIRST_CHARACTERS', () => {
    for (let code = 0; code < 0x250; code++) {
      const first = String.fromCharCode(code);
      const expected = (FORMULA_FIRST_CHARACTERS as readonly string[]).includes(first);
      expect([first, isFormulaLike(`${first}x`)]).toEqual([first, expected]);
    }
  });

  it('and exactly when its first character after any spaces is one of them', () => {
    for (let code = 0; code < 0x250; code++) {
      const first = String.fromCharCode(code);
      const expected = (FORMULA_FIRST_CHARACTERS as readonly string[]).includes(first);
      expect([first, isFormulaLike(`   ${first}x`)]).toEqual([first, expected]);
    }
  });

  it('a phone number is + and PHONE_DIGITS.min to .max digits', () => {
    const phone = (n: number) => `+${'9'.repeat(n)}`;
    expect(isFormulaLike(phone(PHONE_DIGITS.min - 1))).toBe(true);
    expect(isFormulaLike(phone(PHONE_DIGITS.min))).toBe(false);
    expect(isFormulaLike(phone(PHONE_DIGITS.max))).toBe(false);
    expect(isFormulaLike(phone(PHONE_DIGITS.max + 1))).toBe(true);
  });
});
