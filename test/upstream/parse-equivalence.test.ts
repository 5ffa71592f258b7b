/**
 * Generative (fast-check): the worker's fast paths give exactly what the careful paths give, on arbitrary
 * and hostile JSON — the exactness scan without allocations against the scan that compares decoded key
 * strings, the number check by digits against the round trip through a double, the body parse against the
 * careful reader, zod's compiled record schema against the runtime one (same records, same reasons), and
 * the record-limits shortcut against the full walk. A fast path may only ever say "fine" when the careful
 * one would; anything else must come out identical. And the page statement's column parameters, built by
 * paysync, are byte for byte what pg itself would have sent for the same arrays.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { z } from 'zod';
import {
  canonicalByDigits,
  isCanonicalNumber,
  parseExactJson,
  scanJson,
  scanJsonByKeyStrings,
  toExactJson,
} from '../../src/upstream/exact-json.js';
import { duplicateKeysOf, readJsonCarefully } from '../../src/upstream/json-reader.js';
import { rawRecordProblem, withinLimits } from '../../src/upstream/record-limits.js';
import { PaymentSchema, TransferSchema } from '../../src/upstream/schemas.js';
import { columnParams } from '../../src/warehouse/array-literal.js';
import type { Column } from '../../src/warehouse/stream-tables.js';
import { createRequire } from 'node:module';

const RUNS = { numRuns: 2000 };

/** pg's own encoding of a parameter (what it sends for an array: `utils.arrayString`). */
const pgUtils = createRequire(import.meta.url)('pg/lib/utils.js') as {
  prepareValue: (value: unknown) => unknown;
};

/** Number literals: canonical ones, and every way a literal can differ from its double's shortest form. */
const numberLiteral = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => String(d)),
  fc.integer().map(String),
  fc
    .tuple(
      fc.boolean(),
      fc.stringMatching(/^(0|[1-9]\d{0,20})$/),
      fc.option(fc.stringMatching(/^\d{1,20}$/)),
      fc.option(fc.stringMatching(/^[eE][+-]?\d{1,4}$/)),
    )
    .map(
      ([minus, whole, fraction, exponent]) =>
        `${minus ? '-' : ''}${whole}${fraction === null ? '' : `.${fraction}`}${exponent ?? ''}`,
    ),
  fc.constantFrom(
    '-0',
    '0.0',
    '1500.50',
    '0.0000001',
    '0.000001',
    '1e21',
    '123456789012345',
    '1234567890123456',
    '0.1',
    '9007199254740993',
  ),
);

/** Keys from a small alphabet (so objects repeat them), with escaped spellings of the same names. */
const key = fc.constantFrom(
  '"a"',
  '"b"',
  '"amount"',
  '"id"',
  '"\\u0061"',
  '"a\\"b"',
  '"é"',
  '"__proto__"',
  '""',
);
const stringLiteral = fc.oneof(
  fc.string().map((s) => JSON.stringify(s)),
  fc.constantFrom('"10:05"', '"\\\\"', '"x\\"y"', '"\\ud800"', '"1.50"', '"{\\"a\\":1}"'),
);
const ws = fc.constantFrom('', ' ', '\n', '\t ');

/** JSON texts whose objects may name a key twice (JSON.stringify could never write those). */
const { value: jsonText } = fc.letrec<{ value: string; object: string; array: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    numberLiteral,
    stringLiteral,
    fc.constantFrom('true', 'false', 'null'),
    tie('object'),
    tie('array'),
  ),
  object: fc
    .array(fc.tuple(key, ws, tie('value')), { maxLength: 6 })
    .map((members) => `{${members.map(([k, s, v]) => `${s}${k}${s}:${s}${v}`).join(',')}}`),
  array: fc.array(tie('value'), { maxLength: 6 }).map((items) => `[${items.join(', ')}]`),
}));

describe('the exactness scan', () => {
  it('says a literal is canonical by its digits only when the round trip through a double agrees', () => {
    fc.assert(
      fc.property(numberLiteral, (literal) => {
        if (canonicalByDigits(literal, 0, literal.length)) expect(isCanonicalNumber(literal)).toBe(true);
      }),
      RUNS,
    );
  });

  it('finds the same lossless numbers and repeated keys as the scan over decoded key strings', () => {
    fc.assert(
      fc.property(jsonText, (text) => {
        expect(scanJson(text)).toEqual(scanJsonByKeyStrings(text));
      }),
      RUNS,
    );
  });

  it('parses every body exactly as the careful reader does, repeated keys marked alike', () => {
    fc.assert(
      fc.property(jsonText, (text) => {
        const fast = parseExactJson(text);
        const careful = readJsonCarefully(text);
        expect(toExactJson(fast)).toBe(toExactJson(careful));
        expect(repeatedKeys(fast)).toEqual(repeatedKeys(careful));
      }),
      RUNS,
    );
  });

  it('refuses the same texts that are not JSON', () => {
    fc.assert(
      fc.property(jsonText, fc.nat(), fc.string({ maxLength: 3 }), (text, at, junk) => {
        const broken = text.slice(0, at % (text.length + 1)) + junk;
        const outcome = (parse: (t: string) => unknown) => {
          try {
            return toExactJson(parse(broken));
          } catch (error) {
            return error instanceof SyntaxError ? 'SyntaxError' : String(error);
          }
        };
        expect(outcome(parseExactJson)).toBe(outcome(readJsonCarefully));
      }),
      RUNS,
    );
  });
});

/** Every object's repeated keys, in document order (json-reader.ts marks them on the object). */
function repeatedKeys(value: unknown): string[][] {
  const out: string[][] = [];
  const stack = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (v === null || typeof v !== 'object') continue;
    if (!Array.isArray(v)) out.push([...duplicateKeysOf(v)]);
    for (const child of Object.values(v)) stack.push(child);
  }
  return out;
}

/** Records near the schema: each field valid, missing, of the wrong type or hostile, in any mix. */
const fieldValue = (valid: fc.Arbitrary<string>) =>
  fc.oneof(
    { weight: 40, arbitrary: valid },
    { weight: 1, arbitrary: numberLiteral },
    { weight: 1, arbitrary: stringLiteral },
    { weight: 1, arbitrary: jsonText },
  );
const timestamp = fc.oneof(
  fc
    .date({ min: new Date(0), max: new Date(Date.UTC(2100, 0, 1)), noInvalidDate: true })
    .map((d) => JSON.stringify(d.toISOString())),
  fc.constantFrom(
    '"2026-11-20T10:00:00Z"',
    '"2026-11-20T11:00:00+01:00"',
    '"2026-02-29T00:00:00Z"',
    '"2026-11-20T10:00Z"',
    '"0000-01-01T00:00:00Z"',
    '"2026-11-20"',
  ),
);
const paymentText = fc
  .record(
    {
      id: fieldValue(fc.constantFrom('"p1"', '"p2"', '""')),
      reference: fieldValue(fc.constantFrom('"R1"', '"R-é"')),
      amount: fieldValue(numberLiteral),
      description: fieldValue(stringLiteral),
      status: fieldValue(
        fc.constantFrom('"INIT"', '"PENDING"', '"COMPLETE"', '"FAILED"', '"TIMEOUT"', '"REFUNDED"'),
      ),
      transaction_type: fieldValue(
        fc.constantFrom('"PAYMENT"', '"DIRECT_PAYMENT"', '"TRANSFERT"', '"RECHARGE"', '"X"'),
      ),
      phone: fieldValue(fc.constantFrom('null', '"+237600000000"')),
      service_mobile_code: fieldValue(fc.constantFrom('null', '"MTN"')),
      extra_data: fieldValue(fc.constantFrom('{}', '{"fee":0.10}', '{"a":{"b":[1,2]}}', '[]')),
      createdAt: fieldValue(timestamp),
      updatedAt: fieldValue(timestamp),
      organization_id: fieldValue(fc.constantFrom('"o"')),
      api_key_id: fieldValue(fc.constantFrom('"k"')),
      name: fieldValue(fc.constantFrom('"Ada"')),
    },
    { requiredKeys: [] },
  )
  .map(
    (fields) =>
      `{${Object.entries(fields)
        .map(([k, v]) => `${JSON.stringify(k)}:${v}`)
        .join(',')}}`,
  );

describe('record validation', () => {
  for (const [name, schema] of [
    ['payment', PaymentSchema],
    ['transfer', TransferSchema],
  ] as const) {
    const compiled = z.compile(schema as z.ZodType);
    it(`zod's compiled ${name} schema accepts, outputs and words its refusals as the runtime schema does`, () => {
      fc.assert(
        fc.property(paymentText, (text) => {
          const record = parseExactJson(text);
          const fast = compiled.safeParse(record);
          const runtime = schema.safeParse(record);
          expect(fast.success).toBe(runtime.success);
          if (fast.success && runtime.success) expect(toExactJson(fast.data)).toBe(toExactJson(runtime.data));
          else expect(fast.error?.issues).toEqual(runtime.error?.issues);
        }),
        RUNS,
      );
    });
  }

  it('takes the record-limits shortcut only when the full walk finds nothing', () => {
    fc.assert(
      fc.property(fc.oneof(paymentText, jsonText), (text) => {
        const record = parseExactJson(text);
        if (withinLimits(record)) expect(rawRecordProblem(record)).toBeNull();
      }),
      RUNS,
    );
  });

  it('sends hostile records the long way', () => {
    const deep = parseExactJson(`${'['.repeat(40)}1${']'.repeat(40)}`);
    expect(withinLimits(deep)).toBe(false);
    expect(rawRecordProblem(deep)?.reason).toMatch(/nested more than 32 levels/);
    const repeated = parseExactJson('{"a":1,"a":2}');
    expect(withinLimits(repeated)).toBe(false);
    expect(rawRecordProblem(repeated)?.reason).toMatch(/duplicate key "a"/);
    expect(withinLimits(parseExactJson('{"a":"x\\u0000"}'))).toBe(false);
    expect(withinLimits(parseExactJson('{"amount":1500.50}'))).toBe(false); // a LosslessNumber: judged in full
    expect(withinLimits(parseExactJson('{"a":[1,"b",{"c":null}]}'))).toBe(true);
  });
});

describe("the page statement's column parameters", () => {
  const cell = fc.option(
    fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.constantFrom('"', '\\', '\\"', 'NULL', '', ' a b ', '{x,y}', '1500.50', '2026-11-22T01:07:28.142Z'),
    ),
  );

  it('are the array literals pg would send for the same columns', () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 4 })
          .chain((width) =>
            fc
              .array(fc.array(cell, { minLength: width, maxLength: width }), { maxLength: 20 })
              .map((rows) => ({ rows, width })),
          ),
        ({ rows, width }) => {
          const columns = Array.from({ length: width }, (_, c) => rows.map((row) => row[c] ?? null));
          const types = Array.from({ length: width }, (_, c): Column => ({
            name: `c${c}`,
            type: 'text',
            compared: true,
          }));
          expect(columnParams(rows, types)).toEqual(columns.map((column) => pgUtils.prepareValue(column)));
        },
      ),
      RUNS,
    );
  });
});
