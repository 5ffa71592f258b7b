/**
 * One retry policy, as data: every error code paysync raises has a row saying whether retrying can heal it,
 * an unknown code follows a stated rule, the HTTP client and the job layer read the same table, and a job
 * retried after a 429 waits at least the Retry-After the service named.
 */
import { afterAll, describe, expect, it } from '@jest/globals';
import { randomBytes } from 'node:crypto';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import {
  CircuitOpenError,
  ConfigError,
  isRetryable,
  MigrationError,
  PaginationError,
  PaysyncError,
  ServiceUnreachableError,
  UpstreamAuthError,
  UpstreamBadRequestError,
  UpstreamForbiddenError,
  UpstreamNetworkError,
  UpstreamProtocolError,
  UpstreamRateLimitedError,
  UpstreamRequestNotSentError,
  UpstreamServerError,
  UpstreamUnexpectedStatusError,
  UsageError,
  WindowIncompleteError,
} from '../../src/errors.js';
import { RETRY_BY_CODE, retryRuleOf, UNKNOWN_CODE_RULE } from '../../src/error-codes.js';
import {
  DEFAULT_RETRY_POLICY,
  jobRetryDelay,
  retryDelay,
  type FailureKind,
} from '../../src/upstream/retry-delay.js';
import { backoffStrategy } from '../../jobs/start-worker.js';
import { RETRY } from '../../jobs/queue.js';

const ctx = { endpoint: '/api/transferts', source: 'default' };
const every: Array<[PaysyncError, boolean]> = [
  [new ConfigError('x'), false],
  [new UsageError('x'), false],
  [new MigrationError('x'), false],
  [new PaysyncError('NOT_MIGRATED', 'x'), false],
  [new UpstreamAuthError(ctx, 'no'), false],
  [new UpstreamForbiddenError(ctx, 'no'), false],
  [new UpstreamBadRequestError(ctx, ['no']), false],
  [new UpstreamRequestNotSentError(ctx, ['no']), false],
  [new UpstreamRateLimitedError(ctx, 1_000), true],
  [new UpstreamServerError(ctx, 503), true],
  [new UpstreamUnexpectedStatusError(ctx, 404), false],
  [new UpstreamNetworkError(ctx, 'reset'), true],
  [new UpstreamProtocolError(ctx, 'not json'), true],
  [new PaginationError(ctx, 'page ignored'), true],
  [new WindowIncompleteError('short'), true],
  [new ServiceUnreachableError('redis down'), true],
  [new CircuitOpenError(ctx, 'circuit open'), true],
];

describe('the retry table', () => {
  it.each(every.map(([e, retry]) => [e.code, e, retry] as const))(
    '%s has its own row',
    (code, error, retry) => {
      expect(Object.hasOwn(RETRY_BY_CODE, code)).toBe(true);
      expect(retryRuleOf(code).retry).toBe(retry);
      expect(isRetryable(error)).toBe(retry);
    },
  );

  it('MigrationError is never retried (it said so, and now the table agrees)', () => {
    expect(isRetryable(new MigrationError('an applied file changed'))).toBe(false);
  });

  it('an error without a known code follows the stated unknown-code rule, not a silent default', () => {
    expect(retryRuleOf(undefined)).toBe(UNKNOWN_CODE_RULE);
    expect(retryRuleOf('SOMETHING_NEW')).toBe(UNKNOWN_CODE_RULE);
    expect(retryRuleOf('toString')).toBe(UNKNOWN_CODE_RULE); // not a key inherited from Object
    expect(isRetryable(new Error('connection terminated'))).toBe(UNKNOWN_CODE_RULE.retry);
    expect(UNKNOWN_CODE_RULE.why).toMatch(/not a paysync error code/);
  });

  it('the HTTP client stops exactly where the table says retrying cannot heal', () => {
    const cases: Array<[FailureKind, string]> = [
      ['rate-limited', 'UPSTREAM_RATE_LIMITED'],
      ['server', 'UPSTREAM_SERVER_ERROR'],
      ['network', 'UPSTREAM_NETWORK'],
      ['protocol', 'UPSTREAM_PROTOCOL'],
      ['unexpected', 'UPSTREAM_UNEXPECTED_STATUS'],
    ];
    for (const [kind, code] of cases) {
      const delay = retryDelay({ attempt: 1, kind }, DEFAULT_RETRY_POLICY, () => 0.5);
      expect(delay === 'stop').toBe(!retryRuleOf(code).retry);
    }
    expect(retryDelay({ attempt: 1, kind: 'fatal' }, DEFAULT_RETRY_POLICY)).toBe('stop');
  });
});

describe('the job layer waits at least Retry-After', () => {
  it('backoff grows exponentially and never goes under the Retry-After the service named', () => {
    expect(jobRetryDelay(1, undefined, 2_000)).toBe(2_000);
    expect(jobRetryDelay(3, undefined, 2_000)).toBe(8_000);
    expect(jobRetryDelay(1, 45_000, 2_000)).toBe(45_000);
    expect(jobRetryDelay(4, 1_000, 2_000)).toBe(16_000);
    const job = { opts: { backoff: RETRY.backoff } } as Parameters<typeof backoffStrategy>[3];
    expect(backoffStrategy(1, 'paysync', new UpstreamRateLimitedError(ctx, 90_000), job)).toBe(90_000);
    expect(backoffStrategy(1, 'paysync', new UpstreamServerError(ctx, 503), job)).toBe(2_000);
  });

  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
  const prefix = `paysync-test-retry-${randomBytes(4).toString('hex')}`;
  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
  });

  it('a job failing with a 429 (Retry-After 60 s) is put back delayed by at least 60 s', async () => {
    const queue = new Queue('sync', { connection: redis, prefix });
    const blocking = redis.duplicate();
    const worker = new Worker(
      'sync',
      async () => {
        throw new UpstreamRateLimitedError(ctx, 60_000);
      },
      { connection: blocking, prefix, settings: { backoffStrategy } },
    );
    try {
      const failed = new Promise((resolve) => worker.once('failed', resolve));
      const added = await queue.add('tick', { source: 'default', stream: 'payments' }, { ...RETRY });
      await failed;
      const job = await queue.getJob(added.id as string);
      expect(await job!.getState()).toBe('delayed');
      expect(job!.delay).toBeGreaterThanOrEqual(60_000);
      expect(job!.attemptsMade).toBe(1);
    } finally {
      await worker.close();
      await queue.close();
      await blocking.quit();
    }
  });
});
