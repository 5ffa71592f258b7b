/** `paysync sim` flags for the anomaly, throughput, drift and hostile-input switches. */
import { describe, expect, it } from '@jest/globals';
import { UsageError } from '../../src/errors.js';
import { parseSimArgs } from '../../src/sim/cli.js';
import { DEFAULT_EXTRA_FIELDS } from '../../src/sim/switches.js';

describe('paysync sim flags', () => {
  it('sets latency, rate limit, outage, duplicates, extra fields and the echoed key', () => {
    const { switches } = parseSimArgs([
      '--latency',
      '150',
      '--rate-limit-rps',
      '20',
      '--outage',
      'unavailable',
      '--duplicates',
      '0.1',
      '--extra-fields',
      '--echo-key',
      '--page-cap',
      '100',
    ]);
    expect(switches).toEqual({
      pageCap: 100,
      latencyMs: 150,
      rateLimitRps: 20,
      outage: 'unavailable',
      duplicateRate: 0.1,
      paymentExtraFields: DEFAULT_EXTRA_FIELDS,
      transferExtraFields: DEFAULT_EXTRA_FIELDS,
      echoKey: ['api_key_id'],
    });
    expect(parseSimArgs([]).switches).toEqual({});
  });

  it.each([
    ['--latency', '-1'],
    ['--rate-limit-rps', '0'],
    ['--outage', 'refused'],
    ['--duplicates', '1.5'],
  ])('%s %s is refused with a usage error', (flag, value) => {
    expect(() => parseSimArgs([flag, value])).toThrow(UsageError);
  });
});
