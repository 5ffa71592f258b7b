/**
 * The records sheets' amount look is decided in SQL before the COPY (allAmountsExactSql): it must say
 * "exact" of a day's amounts exactly when xlsx-cells.ts's isExactNumber says it of each amount's text, on
 * the amounts PostgreSQL stores (NUMERIC as sent: trailing zeros kept, up to 30 digits and 20 decimals).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { allAmountsExactSql } from '../../src/reconcile/pack-xlsx-query.js';
import { isExactNumber } from '../../src/reconcile/xlsx-cells.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let db: TestDatabase;
const DAY: [Date, Date] = [new Date('2024-02-01T00:00:00Z'), new Date('2024-02-02T00:00:00Z')];

beforeAll(async () => {
  db = await createTestDatabase('amount_look');
  await db.pool.query('CREATE TABLE looks (amount numeric NOT NULL, created_at timestamptz NOT NULL)');
});

afterAll(async () => {
  await db?.drop();
});

/** The SQL's verdict on each amount alone (one day each), beside isExactNumber of PostgreSQL's text. */
async function verdicts(amounts: readonly string[]): Promise<Array<[string, boolean, boolean]>> {
  await db.pool.query('TRUNCATE looks');
  await db.pool.query(
    `INSERT INTO looks SELECT a::numeric, '2024-02-01T00:00:00Z'::timestamptz + (i - 1) * interval '1 day'
       FROM unnest($1::text[]) WITH ORDINALITY AS t(a, i)`,
    [amounts],
  );
  const out: Array<[string, boolean, boolean]> = [];
  for (let i = 0; i < amounts.length; i++) {
    const range = DAY.map((d) => new Date(d.getTime() + i * 86_400_000));
    const { rows } = await db.pool.query<{ exact: boolean; text: string }>(
      `SELECT (${allAmountsExactSql('looks')}) AS exact,
              (SELECT amount::text FROM looks WHERE created_at >= $1 AND created_at < $2) AS text`,
      range,
    );
    const { exact, text } = rows[0] as { exact: boolean; text: string };
    out.push([text, exact, isExactNumber(text)]);
  }
  return out;
}

describe('the amount look decided in SQL', () => {
  it('agrees with isExactNumber at the edges: zeros at either end, 15 and 16 digits, NaN', async () => {
    const edges = [
      '0',
      '0.00',
      '-0.5',
      '1500',
      '1500.50',
      '999999999999999',
      '9999999999999999',
      '999999999999999.0',
      '99999999999999.9',
      '99999999999999.99',
      '1000000000000000',
      '1234567890123450',
      '12345678901234500000000000000',
      '123456789012345600000',
      '100000000000000000000000000000.00000000000000000000',
      '0.000000000000001',
      '0.0000000000000012345678901234',
      '0.00000000000000123456789012345',
      '0.00000000000000000001',
      '101.01000000000000000000',
      '-9007199255313891.11',
      '3316506243.30',
      'NaN',
    ];
    for (const [text, sql, js] of await verdicts(edges)) expect([text, sql]).toEqual([text, js]);
  });

  it('agrees with isExactNumber on any stored amount', async () => {
    const digits = (max: number) => fc.stringMatching(new RegExp(`^[0-9]{1,${max}}$`));
    const amount = fc
      .tuple(fc.boolean(), digits(30), fc.option(digits(20), { nil: undefined }))
      .map(([negative, int, fraction]) => `${negative ? '-' : ''}${int}${fraction ? `.${fraction}` : ''}`);
    const amounts = fc.sample(amount, { numRuns: 300, seed: 20240201 });
    for (const [text, sql, js] of await verdicts(amounts)) expect([text, sql]).toEqual([text, js]);
  });

  it('a day is exact only when every amount is: one that is not makes the column text', async () => {
    await db.pool.query('TRUNCATE looks');
    await db.pool.query(
      `INSERT INTO looks VALUES (1500.50, '2024-02-01T01:00:00Z'), (9999999999999999, '2024-02-01T02:00:00Z'),
                                (2.5, '2024-02-02T01:00:00Z')`,
    );
    const exact = async (range: [Date, Date]) =>
      (await db.pool.query<{ exact: boolean }>(allAmountsExactSql('looks'), range)).rows[0]?.exact;
    expect(await exact(DAY)).toBe(false);
    expect(await exact([DAY[1], new Date('2024-02-03T00:00:00Z')])).toBe(true);
    expect(await exact([new Date('2024-03-01T00:00:00Z'), new Date('2024-03-02T00:00:00Z')])).toBe(true);
  });
});
