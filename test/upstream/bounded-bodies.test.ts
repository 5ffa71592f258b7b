/**
 * What a hostile service can make paysync hold. A 1 MB gzip body that inflates to gigabytes, read whole,
 * would take the worker to gigabytes of RSS; a 200 MB body would abort it on the heap limit. Both end with
 * one clear protocol error at UPSTREAM_MAX_BODY (32 MiB after decompression by default), and the
 * process's peak RSS stays bounded. The client runs in a child process so that its peak RSS is its own
 * (the bound is generous: the figure measured here is in docs/operations.md, "Defences against hostile
 * input").
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { createGzip } from 'node:zlib';

const CHILD = fileURLToPath(new URL('../helpers/fixtures/fetch-once.mjs', import.meta.url));
const PEAK_BOUND_MB = 400;

/** `total` bytes of `chunk` repeated, produced as the reader asks (never held whole). */
function repeated(chunk: Buffer, total: number): Readable {
  let sent = 0;
  return new Readable({
    read() {
      if (sent >= total) return void this.push(null);
      sent += chunk.length;
      this.push(chunk);
    },
  });
}

let server: Server;
let base: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    res.on('error', () => undefined);
    const record = Buffer.from('{"id":"t","amount":1},'.repeat(3_000));
    if (req.url?.includes('/many/')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.end(`[${Array.from({ length: 150_000 }, (_, i) => `{"id":"t${i}"}`).join(',')}]`);
    }
    if (req.url?.includes('/bomb/')) {
      // about 3 GB of JSON-looking text, gzip-compressed on the fly (~1000:1)
      res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
      const body = repeated(record, 3 * 1024 ** 3).pipe(createGzip({ level: 1 }));
      body.on('error', () => undefined);
      body.pipe(res);
      res.on('close', () => body.destroy());
    } else {
      // 200 MB sent plainly, without Content-Length (chunked): only counting can stop it
      res.writeHead(200, { 'content-type': 'application/json' });
      const body = repeated(record, 200 * 1024 ** 2);
      body.pipe(res);
      res.on('close', () => body.destroy());
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Asynchronous: the server runs in this process and must keep answering while the child reads. */
async function fetchInChild(url: string): Promise<{ code?: string; error?: string; maxRssMb: number }> {
  const { stdout, stderr } = await promisify(execFile)(process.execPath, [CHILD, url], { timeout: 120_000 });
  expect(stderr).toBe('');
  return JSON.parse(stdout) as { code?: string; error?: string; maxRssMb: number };
}

describe('pages are bounded', () => {
  it('a page of 150,000 items when 100 were asked is a protocol error, not a stack overflow', async () => {
    const out = await fetchInChild(`${base}/many`);
    expect(out.code).toBe('UPSTREAM_PROTOCOL');
    expect(out.error).toMatch(/a page of 150000 items when 100 were asked \(at most 1100 accepted\)/);
  });
});

describe('response bodies are bounded after decompression', () => {
  it.each([
    ['a gzip bomb (about 3 GB inflated)', 'bomb'],
    ['a 200 MB plain body', 'big'],
  ])('%s ends with a clear error while the peak RSS stays bounded', async (_, kind) => {
    const out = await fetchInChild(`${base}/${kind}`);
    expect(out.code).toBe('UPSTREAM_PROTOCOL');
    expect(out.error).toMatch(/larger than 33554432 bytes after decompression \(UPSTREAM_MAX_BODY\)/);
    process.stdout.write(`${kind}: peak RSS ${out.maxRssMb} MB\n`);
    expect(out.maxRssMb).toBeLessThan(PEAK_BOUND_MB);
  });
});
