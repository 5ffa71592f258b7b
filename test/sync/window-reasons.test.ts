/**
 * The one table of window reason codes: every code has its words, outages never block a day, and the
 * reason of an error that ends a window is read from its code (pure, no server).
 */
import { describe, expect, it } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import {
  CircuitOpenError,
  PaginationError,
  UpstreamAuthError,
  UpstreamNetworkError,
  UpstreamProtocolError,
  UpstreamRateLimitedError,
  UpstreamServerError,
  WindowIncompleteError,
} from '../../src/errors.js';
import {
  blocksDay,
  isOutage,
  NOTE_CODES,
  reasonOf,
  reasonOfError,
  reasonsMarkdown,
  REASON_CODES,
  WINDOW_REASONS,
} from '../../src/sync/window-reasons.js';

const ctx = { endpoint: '/api/paiements/organisations', source: 'default' };

describe('the window reasons table', () => {
  it('gives every code a meaning and an action, and never lets an outage block a day', () => {
    expect(REASON_CODES.length).toBeGreaterThan(20);
    for (const code of REASON_CODES) {
      const r = WINDOW_REASONS[code];
      expect(code).toMatch(/^[A-Z][A-Z_]*$/);
      expect(r.meaning.length).toBeGreaterThan(20);
      expect(r.action.length).toBeGreaterThan(5);
      if (r.outage) expect(r.blocksDay).toBe(false);
      if (r.severity === 'note') expect(r.blocksDay || r.outage).toBe(false);
    }
    expect(['SERVICE_UNAVAILABLE', 'CONNECTION_FAILED', 'CIRCUIT_OPEN'].every(isOutage)).toBe(true);
    expect(isOutage('TOTAL_SHORT')).toBe(false);
    expect(blocksDay('SERVICE_UNAVAILABLE')).toBe(false);
    expect(blocksDay('PAGE_CYCLE')).toBe(true);
  });

  it('names exactly the notes as NOTE_CODES', () => {
    expect([...NOTE_CODES].sort()).toEqual(
      REASON_CODES.filter((c) => WINDOW_REASONS[c].severity === 'note').sort(),
    );
  });

  it('reads an unknown code (a newer worker’s) as UNCLASSIFIED', () => {
    expect(reasonOf('SOMETHING_NEW').code).toBe('UNCLASSIFIED');
    expect(reasonOf(null).code).toBe('UNCLASSIFIED');
  });

  it.each([
    [new UpstreamServerError(ctx, 503), 'SERVICE_UNAVAILABLE'],
    [new UpstreamNetworkError(ctx, 'socket hang up'), 'CONNECTION_FAILED'],
    [new CircuitOpenError(ctx, 'circuit open since …'), 'CIRCUIT_OPEN'],
    [new UpstreamRateLimitedError(ctx, 1000), 'RATE_LIMITED'],
    [new UpstreamAuthError(ctx, 'Invalid API key'), 'KEY_REFUSED'],
    [new UpstreamProtocolError(ctx, 'the body is over UPSTREAM_MAX_BODY'), 'MALFORMED_RESPONSE'],
    [new PaginationError(ctx, 'page 3 repeats page 2', 'PAGE_IGNORED'), 'PAGE_IGNORED'],
    [new PaginationError(ctx, 'ceiling'), 'PAGE_CEILING'],
    [new WindowIncompleteError('short'), 'TOTAL_SHORT'],
    [new CircuitOpenError(ctx, 'circuit open since 12:00'), 'CIRCUIT_OPEN'],
    [Object.assign(new Error('boom'), { code: 'P0001', severity: 'ERROR' }), 'WAREHOUSE_WRITE_FAILED'],
    [Object.assign(new Error('terminating'), { code: '57P01', severity: 'FATAL' }), 'WAREHOUSE_UNAVAILABLE'],
    [Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }), 'WAREHOUSE_UNAVAILABLE'],
    [Object.assign(new Error('not sql'), { code: 'USAGE' }), 'INTERNAL_ERROR'],
    [new TypeError('x is undefined'), 'INTERNAL_ERROR'],
    ['a string', 'INTERNAL_ERROR'],
  ])('%s ends a window with %s', (error, code) => {
    expect(reasonOfError(error)).toBe(code);
  });
});

describe('docs/operations.md', () => {
  it('lists every reason code exactly as the table in src/sync/window-reasons.ts says', () => {
    const docs = readFileSync(resolve(import.meta.dirname, '../../docs/operations.md'), 'utf8');
    const printed = docs.split('\n').filter((line) => /^\| `[A-Z_]+` \| (failure|note)/.test(line));
    const expected = reasonsMarkdown().split('\n').slice(2);
    // On a difference, paste reasonsMarkdown()'s lines into "Window states and reason codes".
    expect(printed).toEqual(expected);
  });
});
