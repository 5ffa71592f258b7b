/**
 * Simulator speed: time to generate ~1,000,000 payments, then records/s served when a client pages one
 * organisation's payments 1000 at a time over HTTP (wrapper shape), whole history then a status-filtered
 * window. The client runs in a worker thread, as a real client would run in its own process, so the
 * figure is the server's rate, not the server and the JSON parsing sharing one core.
 * Run: npm run build && node dist/bench/sim-serve.js [paymentsTotal]
 */
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { startSimulator } from '../src/sim/server.js';

interface Job {
  url: string;
  key: string;
  query: string;
  /** Parse every page as JSON (a real client), or only the first one (the server's rate alone). */
  parse: boolean;
}

async function pageThrough({ url, key, query, parse }: Job): Promise<{ records: number; ms: number }> {
  const started = performance.now();
  const get = (page: number) =>
    fetch(`${url}/api/paiements/organisations?size=1000&page=${page}${query}`, {
      headers: { 'X-API-Key': key },
    });
  const first = (await (await get(0)).json()) as { data: unknown[]; total: number; totalPages: number };
  for (let page = 1; page < first.totalPages; page++) {
    const res = await get(page);
    if (parse) await res.json();
    else await res.arrayBuffer();
  }
  return { records: first.total, ms: performance.now() - started };
}

function inWorker(job: Job): Promise<{ records: number; ms: number }> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: job });
    worker.once('message', resolve);
    worker.once('error', reject);
  });
}

const rate = (r: { records: number; ms: number }) =>
  `${r.records} records in ${r.ms.toFixed(0)} ms: ${Math.round((r.records / r.ms) * 1000)} records/s`;

async function main(): Promise<void> {
  const total = Number(process.argv[2] ?? 1_000_000);
  const days = 3;
  const organisations = 2;
  // Generation covers `days` of history plus 2 days not yet visible.
  const perDay = Math.round(total / organisations / (days + 2));
  const now = new Date('2024-06-15T12:00:00.000Z');
  const started = performance.now();
  const sim = await startSimulator({ seed: 7, days, perDay, organisations, now });
  const generated = perDay * (days + 2) * organisations;
  console.log(
    `generated ${generated} payments (+ transfers) in ${(performance.now() - started).toFixed(0)} ms`,
  );
  const key = sim.keys.organisation[sim.organisations[0] as string] as string;
  for (const parse of [false, true]) {
    const how = parse ? 'client parses every page' : 'server only, pages not parsed';
    console.log(
      `whole history, 1000/page, ${how}: ${rate(await inWorker({ url: sim.url, key, query: '', parse }))}`,
    );
  }
  const from = Math.floor(now.getTime() / 1000) - 2 * 86_400;
  const query = `&status=COMPLETE&dateFrom=${from}`;
  console.log(
    `status + date filtered, parsed: ${rate(await inWorker({ url: sim.url, key, query, parse: true }))}`,
  );
  await sim.stop();
}

if (isMainThread) await main();
else parentPort?.postMessage(await pageThrough(workerData as Job));
