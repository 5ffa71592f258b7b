/**
 * A cost bomb on the status page: 2,000 configured sources. The page (and /status.json) stays under 1 MB:
 * it shows one page of sources at a time, in name order, under a summary of all of them (streams per
 * health phase, the streams needing attention with a link to their page) and links to every page; the
 * calendar's day reasons name a few source streams and count the rest. A malformed page number is a 400.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseSettings } from '../../src/config/settings.js';
import { SOURCES_PER_PAGE } from '../../src/ops/status-paging.js';
import { startHarness, type Harness } from '../helpers/sync-harness.js';
import { httpGet, startOpsStack, type OpsStack } from '../helpers/ops.js';

const SOURCES = 2_000;
const MB = 1024 * 1024;
const name = (i: number) => `src-${String(i).padStart(4, '0')}`;

let h: Harness;
let stack: OpsStack;
let dir: string;
let base: string;
beforeAll(async () => {
  h = await startHarness({ name: 'statusbomb' });
  dir = await mkdtemp(join(tmpdir(), 'paysync-sources-'));
  const file = join(dir, 'sources.json');
  const list = Array.from({ length: SOURCES }, (_, i) => ({
    name: name(i),
    baseUrl: h.sim.url,
    apiKeyEnv: 'BOMB_KEY',
  }));
  await writeFile(file, JSON.stringify(list));
  const settings = parseSettings({
    PAYSYNC_SOURCES_FILE: file,
    BOMB_KEY: h.key,
    DATABASE_URL: h.databaseUrl,
    PAYSYNC_QUEUE_PREFIX: h.prefix,
    SYNC_START: h.settings.SYNC_START,
    DASHBOARD_PORT: '0',
  });
  stack = await startOpsStack(h, { settings });
  base = stack.ops.dashboardUrl as string;
}, 120_000);
afterAll(async () => {
  await stack?.close();
  await h?.close();
  await rm(dir, { recursive: true, force: true });
});

const bytes = (text: string) => Buffer.byteLength(text);

describe('the status page of 2,000 sources', () => {
  it('is under 1 MB, summarises all sources and shows the first page of them', async () => {
    const page = await httpGet(`${base}/status`);
    expect(page.status).toBe(200);
    expect(bytes(page.text)).toBeLessThan(MB);
    expect(page.text).toContain(`All ${SOURCES} sources`);
    const phases = /<p class="phases">streams: ([^<]*)<\/p>/.exec(page.text)?.[1] ?? '';
    const counted = [...phases.matchAll(/(\d+) \w+/g)].reduce((n, m) => n + Number(m[1]), 0);
    expect(counted).toBe(SOURCES * 2); // every stream of every source is in one phase
    const shown = new Set([...page.text.matchAll(/data-source="([^"]+)"/g)].map((m) => m[1]));
    expect([...shown].sort()).toEqual(Array.from({ length: SOURCES_PER_PAGE }, (_, i) => name(i)));
    const pages = Math.ceil(SOURCES / SOURCES_PER_PAGE);
    expect(page.text).toContain(`page 1 of ${pages}`);
    expect(page.text).toContain(`href="/status?page=${pages}"`);
    expect(page.text).toMatch(/more not shown/); // a day's reason names a few gaps and counts the rest
  });

  it('shows the last page of sources, and the JSON pages the same way', async () => {
    const pages = Math.ceil(SOURCES / SOURCES_PER_PAGE);
    const last = await httpGet(`${base}/status?page=${pages}`);
    expect(bytes(last.text)).toBeLessThan(MB);
    const shown = [...last.text.matchAll(/data-source="([^"]+)"/g)].map((m) => m[1]);
    expect(shown).toContain(name(SOURCES - 1));
    expect(shown).not.toContain(name(0));
    const json = await httpGet(`${base}/status.json?page=2`);
    expect(bytes(json.text)).toBeLessThan(MB);
    const body = JSON.parse(json.text) as { streams: Array<{ source: string }>; paging: { pages: number } };
    expect(body.paging.pages).toBe(pages);
    expect(new Set(body.streams.map((s) => s.source)).size).toBe(SOURCES_PER_PAGE);
    expect(body.streams[0]?.source).toBe(name(SOURCES_PER_PAGE));
  });

  it('refuses a page that is not a number', async () => {
    for (const page of ['abc', '0', '-1', '1e3'])
      expect((await httpGet(`${base}/status?page=${page}`)).status).toBe(400);
  });
});
