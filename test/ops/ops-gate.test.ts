/**
 * Every ops port (metrics and probes, dashboard) answers only Host names it knows: loopback names, IP
 * literals, and OPS_ALLOWED_HOSTS; any other name (a DNS-rebinding page) gets 421 on every path, before
 * any route runs. Every page carries nosniff, frame protection and a Content-Security-Policy. No error
 * reaches a client with a stack trace, even with NODE_ENV=development (where Express and Bull Board would
 * print one): a malformed path, a lost database, a lost Redis.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { connect } from 'node:net';
import type { Queue } from 'bullmq';
import { startHarness, type Harness } from '../helpers/sync-harness.js';
import { httpGet, startOpsStack, type OpsStack } from '../helpers/ops.js';

/** Sends `text` as is and returns everything the server answers until it closes. */
function rawRequest(port: number, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = '';
    const socket = connect(port, '127.0.0.1', () => socket.end(text));
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('close', () => resolve(answer));
    socket.on('error', reject);
  });
}

const STACK_FRAME = /\bat .+[:(].*\d+:\d+|node_modules|\.ts:\d+|\.js:\d+/;

let h: Harness;
let stack: OpsStack;
let metrics: string;
let dashboard: string;
const nodeEnv = process.env.NODE_ENV;
beforeAll(async () => {
  process.env.NODE_ENV = 'development'; // the mode in which Express and Bull Board show stacks
  h = await startHarness({
    name: 'opsgate',
    env: { METRICS_PORT: '0', DASHBOARD_PORT: '0', OPS_ALLOWED_HOSTS: 'ops.example.internal' },
  });
  stack = await startOpsStack(h);
  metrics = stack.ops.metricsUrl as string;
  dashboard = stack.ops.dashboardUrl as string;
});
afterAll(async () => {
  await stack?.close();
  await h?.close();
  process.env.NODE_ENV = nodeEnv;
});

const PATHS = () => [
  `${metrics}/metrics`,
  `${metrics}/livez`,
  `${metrics}/healthz`,
  `${metrics}/readyz`,
  `${dashboard}/status`,
  `${dashboard}/status.json`,
  `${dashboard}/queues`,
  `${dashboard}/queues/api/queues`,
];

describe('the Host rule on every ops port', () => {
  it('refuses a foreign name with 421 on every path, naming the setting', async () => {
    for (const url of PATHS()) {
      for (const host of ['rebind.evil.example', 'rebind.evil.example:9464', 'evil.example@127.0.0.1']) {
        const r = await httpGet(url, { host });
        expect([url, host, r.status]).toEqual([url, host, 421]);
        expect(r.text).toMatch(/OPS_ALLOWED_HOSTS/);
      }
    }
  });

  it('refuses a request that names no Host at all (HTTP/1.0)', async () => {
    for (const url of PATHS()) {
      const { port, pathname } = new URL(url);
      const answer = await rawRequest(Number(port), `GET ${pathname} HTTP/1.0\r\n\r\n`);
      expect([url, answer.split('\r\n')[0]]).toEqual([url, expect.stringMatching(/^HTTP\/1\.[01] 421 /)]);
    }
  });

  it('answers loopback names, IP literals (scrapers and probes) and the names in OPS_ALLOWED_HOSTS', async () => {
    for (const url of PATHS()) {
      const port = new URL(url).port;
      for (const host of [
        'localhost',
        '127.0.0.1',
        '[::1]',
        '10.42.0.7',
        '[fd00::7]',
        'OPS.example.internal',
      ]) {
        const r = await httpGet(url, { host: `${host}:${port}` });
        expect([url, host, r.status === 421]).toEqual([url, host, false]);
      }
    }
  });
});

describe('pages and errors', () => {
  it('every page carries nosniff, frame protection and a Content-Security-Policy', async () => {
    for (const url of [...PATHS(), `${dashboard}/`]) {
      const r = await httpGet(url);
      expect([url, r.headers['x-content-type-options']]).toEqual([url, 'nosniff']);
      expect([url, r.headers['x-frame-options']]).toEqual([url, 'DENY']);
      expect([url, r.headers['content-security-policy']]).toEqual([
        url,
        expect.stringMatching(/script-src 'self'/),
      ]);
      expect(String(r.headers['content-security-policy'])).toMatch(/frame-ancestors 'none'/);
    }
    // a route nobody serves: Express's 404 replaces the policy with a stricter one (default-src 'none')
    const missing = await httpGet(`${metrics}/nowhere`);
    expect(missing.status).toBe(404);
    expect(missing.headers['x-content-type-options']).toBe('nosniff');
    expect(missing.headers['x-frame-options']).toBe('DENY');
    expect(String(missing.headers['content-security-policy'])).toMatch(
      /default-src 'none'|frame-ancestors 'none'/,
    );
  });

  it('a malformed path, a lost database and a lost Redis are told without a stack trace', async () => {
    const malformed = await httpGet(`${dashboard}/queues/api/queues/%E0%A4%A/jobs/1`);
    expect(malformed.status).toBeGreaterThanOrEqual(400);
    expect(malformed.text).not.toMatch(STACK_FRAME);

    await (stack.running.queue as unknown as Queue).disconnect(); // Bull Board's reads now fail
    const board = await httpGet(`${dashboard}/queues/api/queues`);
    expect(board.status).toBe(500);
    expect(board.text).not.toMatch(STACK_FRAME);

    await stack.runtime.pool.end(); // every status read now fails
    for (const url of [`${dashboard}/status`, `${dashboard}/status.json`]) {
      const r = await httpGet(url);
      expect([url, r.status]).toEqual([url, 500]);
      expect([url, r.text]).toEqual([url, expect.not.stringMatching(STACK_FRAME)]);
      expect(r.text).toMatch(/internal error/);
    }
    expect((await httpGet(`${metrics}/metrics`)).text).not.toMatch(STACK_FRAME); // it reports what it can
  });
});
