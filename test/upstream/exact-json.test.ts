/** Money stays exact from the service's JSON text to the decimal string the warehouse stores. */
import { describe, expect, it } from '@jest/globals';
import { needsLosslessParse, parseExactJson, toExactJson } from '../../src/upstream/exact-json.js';
import { validatePayments } from '../../src/upstream/schemas.js';

const payment = (amount: string, extra = '{}') =>
  `{"id":"p1","reference":"R1","amount":${amount},"description":"café: 10:05 \\"x\\":1.50","status":"COMPLETE",` +
  `"transaction_type":"PAYMENT","phone":null,"service_mobile_code":null,"extra_data":${extra},` +
  `"createdAt":"2026-11-20T10:05:07.250Z","updatedAt":"2026-11-20T10:06:00.000Z","organization_id":"o","api_key_id":"k"}`;

describe('exact JSON', () => {
  it('keeps the native parser for canonical numbers, whatever the strings hold', () => {
    expect(needsLosslessParse(`[${payment('1500.5')},${payment('250000000')}]`)).toBe(false);
  });

  it('detects literals a double would alter', () => {
    for (const literal of ['1500.50', '12345678901234567.89', '1e21', '0.10']) {
      expect(needsLosslessParse(`[${payment(literal)}]`)).toBe(true);
    }
  });

  it('brings amounts through validation as their exact decimal text', () => {
    for (const literal of ['1500.5', '250000000', '1500.50', '12345678901234567.89', '0.1', '99.99']) {
      const { valid, rejects } = validatePayments(parseExactJson(`[${payment(literal)}]`) as unknown[]);
      expect(rejects).toEqual([]);
      expect(valid[0]?.amount).toBe(literal);
    }
  });

  it('round-trips extra_data numbers exactly', () => {
    const [record] = parseExactJson(
      `[${payment('1', '{"fee":0.10,"n":{"big":12345678901234567890}}')}]`,
    ) as Array<{ extra_data: unknown }>;
    expect(toExactJson(record!.extra_data)).toBe('{"fee":0.10,"n":{"big":12345678901234567890}}');
  });

  it('still rejects text that is not JSON', () => {
    expect(() => parseExactJson('<html>oops</html>')).toThrow(SyntaxError);
  });
});
