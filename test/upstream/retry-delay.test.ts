import { describe, expect, it } from '@jest/globals';
import {
  DEFAULT_RETRY_POLICY,
  failureKindOf,
  parseRetryAfter,
  retryDelay,
  type FailureKind,
} from '../../src/upstream/retry-delay.js';

const policy = { retries: 5, baseMs: 250, maxMs: 30_000, maxRetryAfterMs: 120_000 };
const top = () => 0.999999;

describe('the retry decision', () => {
  it('never retries what retrying cannot fix: 400, 401, 403', () => {
    for (const status of [400, 401, 403]) {
      expect(failureKindOf(status)).toBe('fatal');
      expect(retryDelay({ attempt: 1, kind: failureKindOf(status) }, policy)).toBe('stop');
    }
  });

  it('retries 429, 5xx, 408, network failures and malformed bodies', () => {
    expect(failureKindOf(429)).toBe('rate-limited');
    for (const status of [500, 502, 503, 504, 408]) expect(failureKindOf(status)).toBe('server');
    for (const kind of ['rate-limited', 'server', 'network', 'protocol'] as FailureKind[]) {
      expect(retryDelay({ attempt: 1, kind }, policy)).not.toBe('stop');
    }
  });

  it('does not retry a 404 or a redirect: a wrong base URL does not heal in seconds', () => {
    for (const status of [301, 404, 405, 422]) {
      expect(retryDelay({ attempt: 1, kind: failureKindOf(status) }, policy)).toBe('stop');
    }
  });

  it('backs off exponentially with full jitter, up to the ceiling', () => {
    const ceilings = [1, 2, 3, 4, 5].map((attempt) => retryDelay({ attempt, kind: 'server' }, policy, top));
    expect(ceilings).toEqual([250, 500, 1000, 2000, 4000]);
    expect(retryDelay({ attempt: 1, kind: 'server' }, policy, () => 0)).toBe(0);
    const many = { ...policy, retries: 20 };
    expect(retryDelay({ attempt: 20, kind: 'network' }, many, top)).toBe(30_000);
  });

  it('stops after the configured number of retries', () => {
    expect(retryDelay({ attempt: 5, kind: 'server' }, policy)).not.toBe('stop');
    expect(retryDelay({ attempt: 6, kind: 'server' }, policy)).toBe('stop');
    expect(retryDelay({ attempt: 1, kind: 'server' }, { ...policy, retries: 0 })).toBe('stop');
    expect(DEFAULT_RETRY_POLICY.retries).toBe(5);
  });

  it('honours Retry-After as a floor, with a little jitter on top', () => {
    const delay = retryDelay({ attempt: 1, kind: 'rate-limited', retryAfterMs: 3_000 }, policy, top);
    expect(delay).toBeGreaterThanOrEqual(3_000);
    expect(delay).toBeLessThanOrEqual(3_000 + policy.baseMs);
  });

  it('stops rather than sleep through a Retry-After longer than maxRetryAfterMs', () => {
    expect(retryDelay({ attempt: 1, kind: 'rate-limited', retryAfterMs: 120_001 }, policy)).toBe('stop');
  });

  it('repeats a request that is not idempotent only when the service provably did not act on it', () => {
    const post = { attempt: 1, idempotent: false };
    expect(retryDelay({ ...post, kind: 'server' }, policy)).toBe('stop');
    expect(retryDelay({ ...post, kind: 'network' }, policy)).toBe('stop');
    expect(retryDelay({ ...post, kind: 'protocol' }, policy)).toBe('stop');
    expect(retryDelay({ ...post, kind: 'rate-limited' }, policy)).not.toBe('stop');
    expect(retryDelay({ ...post, kind: 'network', neverSent: true }, policy)).not.toBe('stop');
  });
});

describe('Retry-After parsing', () => {
  const now = Date.parse('2024-05-01T12:00:00Z');
  it('reads delta-seconds', () => {
    expect(parseRetryAfter('7', now)).toBe(7_000);
    expect(parseRetryAfter(' 0 ', now)).toBe(0);
    expect(parseRetryAfter('1.5', now)).toBe(1_500);
  });
  it('reads an HTTP date, never negative', () => {
    expect(parseRetryAfter('Wed, 01 May 2024 12:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('Wed, 01 May 2024 11:00:00 GMT', now)).toBe(0);
  });
  it('ignores an absent or unreadable header', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-5', now)).toBeUndefined();
  });
});
