/**
 * The ops dashboard in a real headless browser (Debian's chromium driven by playwright-core): the status
 * page shows every source and stream, and a failed job can be seen with its error and retried from the
 * Bull Board queue view. The dashboard demands its token, refuses cross-origin changes, and cannot be
 * exposed beyond loopback without a token.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Queue } from 'bullmq';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { parseSettings } from '../../src/config/settings.js';
import { assertDashboardProtected } from '../../src/ops/ops-server.js';
import { startHarness, type Harness } from '../helpers/sync-harness.js';
import { httpGet, insertReconcileRun, settled, startOpsStack, type OpsStack } from '../helpers/ops.js';

const TOKEN = 'ops-token-for-tests';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

let h: Harness | null = null;
let stack: OpsStack | null = null;
let browser: BrowserContext | null = null;
let profile: string | null = null;
afterEach(async () => {
  await browser?.close();
  await stack?.close();
  await h?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
  browser = stack = h = profile = null;
});

/** Debian's chromium with a fresh profile; never a downloaded browser. */
async function launchBrowser(): Promise<BrowserContext> {
  profile = await mkdtemp(join(tmpdir(), 'paysync-chromium-'));
  return chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: CHROMIUM_ARGS,
    headless: true,
    httpCredentials: { username: 'ops', password: TOKEN },
  });
}

/**
 * Bull Board's job actions are icon buttons named only by their tooltip: hover each until the tooltip
 * matches, then click it and confirm.
 */
async function clickJobAction(page: Page, name: RegExp): Promise<void> {
  const actions = page.locator('li [data-base-ui-tooltip-trigger] button');
  for (let i = 0; i < (await actions.count()); i++) {
    await actions.nth(i).hover();
    const tip = page.locator('[data-base-ui-portal] [role="presentation"]').filter({ hasText: name });
    const found = await tip
      .first()
      .waitFor({ timeout: 1_500 })
      .then(() => true)
      .catch(() => false);
    if (!found) continue;
    await actions.nth(i).click();
    await page.getByRole('button', { name: /^confirm$/i }).click({ timeout: 5_000 }); // "Are you sure?"
    return;
  }
  throw new Error(`no job action whose tooltip matches ${name}`);
}

async function failedWindowJob(queue: Queue): Promise<string> {
  const data = { source: 'gone', stream: 'payments', start: 0, end: 86_400_000, kind: 'backfill' };
  const job = await queue.add('window', data, { jobId: 'window|gone|payments|0|86400000', attempts: 3 });
  expect(await settled(queue, job.id as string)).toBe('failed');
  return job.id as string;
}

describe('the ops dashboard', () => {
  it('shows the sources and lets ops retry a failed job, in a real browser', async () => {
    h = await startHarness({ name: 'opsdash', env: { DASHBOARD_PORT: '0', DASHBOARD_TOKEN: TOKEN } });
    stack = await startOpsStack(h);
    const queue = stack.running.queue as unknown as Queue;
    const id = await failedWindowJob(queue);
    await stack.running.worker.pause(true); // the retried job must stay visible as waiting
    const base = stack.ops.dashboardUrl as string;
    browser = await launchBrowser();
    const page = await browser.newPage();

    await page.goto(`${base}/`);
    expect(page.url()).toBe(`${base}/status`);
    const streams = page.locator('table.streams tbody tr');
    expect(await streams.count()).toBe(2);
    await expect(page.locator('table.streams').innerText()).resolves.toMatch(/default\s+payments/);
    await expect(page.locator('table.streams').innerText()).resolves.toMatch(/default\s+transfers/);
    await expect(page.locator('.reconcile-empty').innerText()).resolves.toContain('no reconcile results yet');
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    await insertReconcileRun(stack.runtime.pool, yesterday, 2);
    await page.reload();
    const reconcile = await page.locator('table.reconcile').innerText();
    expect(reconcile).toMatch(new RegExp(`${yesterday}.*default\\s+payments.*match`));
    expect(reconcile).toMatch(/default\s+transfers\s+5\s+3\s+1 status differ/);
    await expect(page.locator('.queue').innerText()).resolves.toContain('failed 1');

    await page.click('text=open the queue dashboard');
    await page.waitForURL(`${base}/queues**`);
    await page.goto(`${base}/queues/queue/sync?status=failed`);
    await page.getByText('is not configured in this worker').first().waitFor({ timeout: 15_000 });
    const before = (await queue.getJob(id))?.processedOn;
    await clickJobAction(page, /retry/i);
    // Retried: the job goes back to waiting, and a worker whose blocking fetch was already under way may
    // take it at once (pause does not cancel that fetch), run it again, and fail it again. Either way
    // it was run again from the dashboard's click.
    const retried = async () => {
      const job = await queue.getJob(id);
      return (await queue.getJobState(id)) !== 'failed' || job?.processedOn !== before;
    };
    for (let i = 0; i < 150 && !(await retried()); i++) await page.waitForTimeout(100);
    expect(await retried()).toBe(true);
  });

  it('demands the token and refuses cross-origin changes', async () => {
    h = await startHarness({ name: 'opsauth', env: { DASHBOARD_PORT: '0', DASHBOARD_TOKEN: TOKEN } });
    stack = await startOpsStack(h);
    const base = stack.ops.dashboardUrl as string;
    const anonymous = await httpGet(`${base}/status`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['www-authenticate']).toMatch(/^Basic/);
    expect((await httpGet(`${base}/status`, { authorization: 'Bearer wrong-token-xx' })).status).toBe(401);
    expect((await httpGet(`${base}/status.json`, { authorization: `Bearer ${TOKEN}` })).status).toBe(200);
    const basic = `Basic ${Buffer.from(`anyone:${TOKEN}`).toString('base64')}`;
    expect((await httpGet(`${base}/queues/api/queues`, { authorization: basic })).status).toBe(200);
    const retryAll = `${base}/queues/api/queues/sync/retry/failed`;
    const csrf = await httpGet(retryAll, { authorization: basic, origin: 'http://evil.example' }, 'PUT');
    expect(csrf.status).toBe(403);
    const own = await httpGet(retryAll, { authorization: basic, origin: base }, 'PUT');
    expect(own.status).toBe(200);
  });
});

describe('the dashboard without a token', () => {
  it('answers only its own Host names (DNS rebinding refused) and refuses every Bull Board change', async () => {
    h = await startHarness({ name: 'opsro', env: { DASHBOARD_PORT: '0' } });
    stack = await startOpsStack(h);
    const queue = stack.running.queue as unknown as Queue;
    await queue.upsertJobScheduler('probe-scheduler', { every: 3_600_000 }, { name: 'tick', data: {} });
    const base = stack.ops.dashboardUrl as string;
    const port = new URL(base).port;
    for (const host of ['localhost', '127.0.0.1', '[::1]'])
      expect((await httpGet(`${base}/status.json`, { host: `${host}:${port}` })).status).toBe(200);
    for (const host of [
      `rebind.evil.example:${port}`,
      'rebind.evil.example',
      `127.0.0.1.evil.example:${port}`,
    ]) {
      const refused = await httpGet(`${base}/queues/api/queues`, { host });
      expect(refused.status).toBe(421);
      expect(refused.text).toMatch(/OPS_ALLOWED_HOSTS/);
    }
    // every route of Bull Board's API that changes something
    const require = createRequire(import.meta.url);
    const { appRoutes } = require('@bull-board/api/dist/routes.js') as {
      appRoutes: { api: Array<{ method: string; route: string | string[] }> };
    };
    const changes = appRoutes.api.filter((r) => r.method !== 'get');
    expect(changes.length).toBeGreaterThan(15);
    for (const { method, route } of changes) {
      for (const path of [route].flat()) {
        const url = `${base}/queues${path
          .replace(':queueName', 'sync')
          .replace(':queueStatus', 'failed')
          .replace(':schedulerId', 'probe-scheduler')
          .replace(':jobId', 'x')}`;
        const r = await httpGet(url, { 'content-type': 'application/json' }, method.toUpperCase());
        expect([method, path, r.status]).toEqual([method, path, 403]);
      }
    }
    expect(await queue.isPaused()).toBe(false);
    expect(await queue.getJobScheduler('probe-scheduler')).toBeDefined();
    expect((await httpGet(`${base}/queues/api/queues`)).status).toBe(200); // reading still works
  });

  it('answers the Host names listed in DASHBOARD_ALLOWED_HOSTS', async () => {
    h = await startHarness({
      name: 'opshosts',
      env: { DASHBOARD_PORT: '0', DASHBOARD_ALLOWED_HOSTS: 'ops.example.internal, other.example' },
    });
    stack = await startOpsStack(h);
    const base = stack.ops.dashboardUrl as string;
    expect((await httpGet(`${base}/status.json`, { host: 'OPS.example.internal:9' })).status).toBe(200);
    expect((await httpGet(`${base}/status.json`, { host: 'evil.example' })).status).toBe(421);
  });
});

describe('dashboard protection settings', () => {
  const env = (extra: Record<string, string>) =>
    parseSettings({
      PAYMENTS_BASE_URL: 'http://127.0.0.1:1',
      PAYMENTS_API_KEY: 'sk_test_protection',
      ...extra,
    });

  it('binds to loopback by default and needs DASHBOARD_TOKEN to be exposed', () => {
    expect(env({ DASHBOARD_PORT: '9465' }).DASHBOARD_HOST).toBe('127.0.0.1');
    expect(() => assertDashboardProtected(env({ DASHBOARD_PORT: '9465' }))).not.toThrow();
    expect(() =>
      assertDashboardProtected(env({ DASHBOARD_PORT: '9465', DASHBOARD_HOST: '0.0.0.0' })),
    ).toThrow(/DASHBOARD_TOKEN must be set/);
    const exposed = env({ DASHBOARD_PORT: '9465', DASHBOARD_HOST: '0.0.0.0', DASHBOARD_TOKEN: TOKEN });
    expect(() => assertDashboardProtected(exposed)).not.toThrow();
  });
});
