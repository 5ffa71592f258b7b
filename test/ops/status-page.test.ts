/**
 * The status page answers finance's and ops' questions, in a real headless browser (Debian's chromium,
 * driven by playwright-core). Everything on it comes from paysync's real paths: live ticks run by a worker
 * against the simulator, `reconcile`, `export`, a recorded backfill with one window run. The calendar shows
 * a final day, a provisional one, a day reconciled with quarantined records, an uncovered day and today;
 * the running backfill shows its progress; the charts draw the ticks' data with their axes; an empty chart
 * says so. A screenshot is kept under test-artifacts/ (path printed).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Job, Queue } from 'bullmq';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { createQueue, type SyncQueue } from '../../jobs/queue.js';
import { startWorker } from '../../jobs/start-worker.js';
import { PaysyncMetrics } from '../../src/ops/metrics.js';
import { startOps, type RunningOps } from '../../src/ops/ops-server.js';
import { exportDay } from '../../src/reconcile/export-day.js';
import { reconcileDay, type ReconcileResult } from '../../src/reconcile/reconcile.js';
import { planBackfill } from '../../src/sync/backfill.js';
import { runBackfillItem } from '../../src/sync/run-work.js';
import { localDayOf } from '../../src/sync/windows.js';
import { getBackfill, recordBackfill } from '../../src/warehouse/backfill-store.js';
import { tempExportDir } from '../helpers/export.js';
import { settled } from '../helpers/ops.js';
import { startHarness, type Harness } from '../helpers/sync-harness.js';

const ZONE = 'Africa/Porto-Novo';
const TOKEN = 'status-page-token-for-tests';
const DAY_MS = 86_400_000;
const ARTIFACTS = resolve('test-artifacts');

let h: Harness;
let exportDir: string;
let queue: SyncQueue;
let ops: RunningOps;
let browser: BrowserContext;
let profile: string;
let page: Page;
let quarantineRun: ReconcileResult;
let backfillId: number;
let ticks: Job[];
const dayAgo = (n: number) => localDayOf(new Date(h.sim.now().getTime() - n * DAY_MS), ZONE);

beforeAll(async () => {
  exportDir = await tempExportDir();
  h = await startHarness({
    name: 'status-page',
    // malformed records: the service lists records paysync quarantines, so reconcile explains with them
    sim: { days: 3, perDay: 60, malformed: 24, switches: { shape: 'wrapper' } },
    env: {
      REPORT_TIMEZONE: ZONE,
      EXPORT_DIR: exportDir,
      PAGE_SIZE: '50',
      DASHBOARD_PORT: '0',
      DASHBOARD_TOKEN: TOKEN,
      // a day becomes final once this has passed since it ended (records still moving do not hold it back)
      SETTLE_HORIZON: '1h',
    },
  });
  // Live sync as the worker runs it: one tick per stream, as jobs, so the queue keeps their results (charts).
  const worker = await startWorker(h.runtime, { schedules: false });
  try {
    ticks = [];
    for (const stream of ['payments', 'transfers'] as const) {
      const job = await worker.queue.add('tick', { source: 'default', stream }, { jobId: `tick-${stream}` });
      expect(await settled(worker.queue as unknown as Queue, job.id as string, 60_000)).toBe('completed');
      ticks.push((await worker.queue.getJob(job.id as string)) as Job);
    }
  } finally {
    await worker.close(); // no worker from here on: the backfill below stays running, as recorded
  }
  // Finance's days: dayAgo(2) reconciled and exported (final), dayAgo(3) exported unreconciled
  // (provisional), dayAgo(1) reconciled only (its differences explained by quarantined records).
  expect((await reconcileDay(h.runtime, dayAgo(2))).mismatches).toBe(0);
  quarantineRun = await reconcileDay(h.runtime, dayAgo(1));
  expect(quarantineRun).toMatchObject({ mismatches: 0 });
  expect(quarantineRun.quarantined).toBeGreaterThan(0);
  expect((await exportDay(h.runtime, dayAgo(2), { now: h.sim.now() })).state).toBe('final');
  expect((await exportDay(h.runtime, dayAgo(3), { now: h.sim.now() })).state).toBe('provisional');
  // A backfill of three days before sync started, as `paysync backfill` records it; one window read.
  const [from, to] = [dayAgo(8), dayAgo(6)];
  const jobs = planBackfill(h.settings, h.settings.sources, from, to, ['payments']);
  const request = { sources: ['default'], streams: ['payments'], fromDay: from, toDay: to, timeZone: ZONE };
  backfillId = (await recordBackfill(h.runtime.pool, request, jobs)).backfill.id;
  const first = jobs[0]!.data;
  await runBackfillItem(h.runtime.syncContext(h.settings.sources[0]!), {
    ...first,
    backfillId,
  } as typeof first);

  queue = createQueue(h.runtime.redis, h.prefix);
  ops = await startOps({
    runtime: h.runtime,
    queue: queue as unknown as Queue,
    metrics: new PaysyncMetrics(),
  });
  profile = await mkdtemp(join(tmpdir(), 'paysync-chromium-'));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
    ],
    headless: true,
    javaScriptEnabled: false, // the page must work without script
    httpCredentials: { username: 'ops', password: TOKEN },
    viewport: { width: 1280, height: 900 },
  });
  page = await browser.newPage();
  await page.goto(`${ops.dashboardUrl as string}/status`);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await ops?.close();
  await queue?.close();
  await h?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
  await rm(exportDir, { recursive: true, force: true });
});

const cell = (day: string) => page.locator(`details.day[data-day="${day}"]`);
const summaryOf = async (day: string) =>
  (await cell(day).locator('summary').innerText()).replace(/\s+/g, ' ');

describe('the calendar of days', () => {
  it('labels each day in words by its state, with its reconcile result and pack version', async () => {
    await expect(cell(dayAgo(2)).getAttribute('data-state')).resolves.toBe('final');
    expect(await summaryOf(dayAgo(2))).toMatch(/final (matched|explained by \d+ quarantined) pack v1$/);

    await expect(cell(dayAgo(3)).getAttribute('data-state')).resolves.toBe('provisional');
    expect(await summaryOf(dayAgo(3))).toMatch(/provisional not reconciled pack v1$/);
    await expect(cell(dayAgo(3)).getAttribute('title')).resolves.toContain('not reconciled yet');

    const q = quarantineRun.quarantined;
    await expect(cell(dayAgo(1)).getAttribute('data-state')).resolves.toBe('provisional');
    expect(await summaryOf(dayAgo(1))).toMatch(
      new RegExp(`provisional explained by ${q} quarantined no pack$`),
    );

    // before SYNC_START and outside the backfill: out of live sync's range, not missing, no backfill asked
    await expect(cell(dayAgo(12)).getAttribute('data-state')).resolves.toBe('out-of-range');
    expect(await summaryOf(dayAgo(12))).toMatch(/out of range not reconciled no pack$/);
    const title = (await cell(dayAgo(12)).getAttribute('title')) ?? '';
    expect(title).toContain("before live sync's start (SYNC_START");
    expect(title).not.toContain('paysync backfill --from');
    const outside = await page.locator('details.day[data-state="not-synced"]').count();
    expect(outside).toBe(0); // every day before SYNC_START is out of range, every day after it synced
    // the running backfill's open windows are being read
    await expect(cell(dayAgo(7)).getAttribute('data-state')).resolves.toBe('syncing');
    await expect(cell(localDayOf(new Date(), ZONE)).getAttribute('data-state')).resolves.toBe('syncing');
    expect(await page.locator('details.day').count()).toBe(35);
  });

  it("opens a day's counts, exact sums, quarantined records and pack files without script", async () => {
    await cell(dayAgo(1)).locator('summary').click();
    const detail = cell(dayAgo(1)).locator('.day-detail');
    await expect(detail.isVisible()).resolves.toBe(true);
    const { rows } = await h.runtime.pool.query(
      `SELECT count(*)::int AS n, sum(amount)::text AS s FROM reporting.payments
        WHERE (created_at AT TIME ZONE $2)::date = $1::date`,
      [dayAgo(1), ZONE],
    );
    const totals = await detail.locator('table.totals').innerText();
    expect(totals).toMatch(new RegExp(`payments\\s+${rows[0].n}\\s+${rows[0].s.replace('.', '\\.')}`));
    // the first ten by id (byte order, records without an id last), then how many more
    const listed = await detail.locator('ul.quarantined li').allInnerTexts();
    const ids = quarantineRun.differences.filter((d) => d.kind === 'quarantined').map((d) => d.id);
    const named = ids.filter((id): id is string => id !== null).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const expected = [...named, ...ids.filter((id) => id === null).map(() => '(no id)')].slice(0, 10);
    expect(listed.slice(0, expected.length).map((l) => l.split(' ')[1]?.replace(/:$/, ''))).toEqual(expected);
    if (ids.length > 10) expect(listed[10]).toBe(`and ${ids.length - 10} more (first 10 listed)`);
    await expect(detail.locator('h4').first().innerText()).resolves.toBe(`${q()} quarantined records`);

    await cell(dayAgo(2)).locator('summary').click();
    const files = await cell(dayAgo(2)).locator('ul.files li').allInnerTexts();
    expect(files.some((f) => f.startsWith(`${dayAgo(2)}/v1/payments.csv`))).toBe(true);
  });
});
const q = () => quarantineRun.quarantined;

describe('health, backfills and charts', () => {
  it('shows each stream healthy with its lag in words (the ticks just ran)', async () => {
    for (const stream of ['payments', 'transfers']) {
      const item = page.locator(`li.health[data-stream="${stream}"]`);
      await expect(item.locator('.badge').innerText()).resolves.toBe('healthy');
      await expect(item.innerText()).resolves.toMatch(
        new RegExp(`default ${stream} healthy, (less than a minute|\\d+ min) behind`),
      );
    }
  });

  it('shows the running backfill with its progress, counts and pace', async () => {
    const b = await getBackfill(h.runtime.pool, backfillId);
    expect(b).toMatchObject({ state: 'running', done: 1, total: 3 });
    const item = page.locator(`li.backfill[data-backfill="${backfillId}"]`);
    await expect(item.locator('progress').getAttribute('value')).resolves.toBe('1');
    await expect(item.locator('progress').getAttribute('max')).resolves.toBe('3');
    await expect(item.locator('.bf-counts').innerText()).resolves.toBe(
      '1 done, 0 failed, 2 left of 3 windows (33%)',
    );
    await expect(item.locator('.bf-rate').innerText()).resolves.toMatch(
      /windows per hour; (under a minute|about .+) left$/,
    );
    // where the limit is: the source's requests per second against UPSTREAM_RPS (and its latency, if fresh)
    await expect(item.locator('.bf-pace').innerText()).resolves.toMatch(
      /^default: \d+\.\d of 2000 req\/s(, the service answers in \d+ ms)?$/,
    );
  });

  it('draws the last 24 hours from the ticks, with axes and units; an empty chart says so', async () => {
    const lag = page.locator('#chart-lag svg');
    // a point where each tick ended, and the live lag now
    expect(await lag.locator('circle.point[data-series="default/payments"]').count()).toBeGreaterThanOrEqual(
      2,
    );
    expect(await lag.locator('circle.point[data-series="default/transfers"]').count()).toBeGreaterThanOrEqual(
      2,
    );
    await expect(lag.locator('text.axis-label').allTextContents()).resolves.toEqual([
      `time (${ZONE}), last 24 h`,
      'minutes behind',
    ]);
    // records new to the warehouse, each once (the backfill's re-reads of a synced day add nothing)
    const records = page.locator('#chart-records svg rect.point[data-series="payments"]');
    expect(await records.count()).toBe(1); // every payment was first stored within the hour
    const stored = (await h.runtime.pool.query('SELECT count(*)::int AS n FROM reporting.payments')).rows[0]
      .n;
    await expect(records.first().locator('title').textContent()).resolves.toMatch(
      new RegExp(`^payments .*: ${stored} new records per hour$`),
    );
    await expect(page.locator('#chart-records .legend').innerText()).resolves.toContain(
      `payments: ${stored} distinct new records in 24 h`,
    );
    const rejects = await page.locator('#chart-rejects svg rect.point').count();
    expect(rejects).toBeGreaterThan(0); // the malformed records were first seen by the ticks
    const failed = ticks.some(
      (t) =>
        ((t.returnvalue as { incomplete?: number; outcome?: string }).incomplete ?? 0) > 0 ||
        (t.returnvalue as { outcome?: string }).outcome === 'incomplete',
    );
    if (!failed) {
      await expect(page.locator('#chart-failures .no-data').innerText()).resolves.toBe(
        'no data in the last 24 h',
      );
      expect(await page.locator('#chart-failures svg').count()).toBe(0);
    } else expect(await page.locator('#chart-failures svg rect.point').count()).toBeGreaterThan(0);
  });

  it('is kept as a screenshot', async () => {
    for (const day of [dayAgo(1), dayAgo(2)]) await cell(day).locator('summary').click(); // closed again
    await expect(page.locator('details.day[open]').count()).resolves.toBe(0);
    await mkdir(ARTIFACTS, { recursive: true });
    const path = join(ARTIFACTS, 'status-page.png');
    await page.screenshot({ path, fullPage: true });
    process.stdout.write(`status page screenshot: ${path}\n`);
  });
});
