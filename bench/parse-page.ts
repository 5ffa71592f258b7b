/**
 * The worker's per-page CPU without the network or PostgreSQL: a 1000-payment page body as the simulator
 * writes it, turned into validated records (parse, list page, record checks, schema, storable), beside
 * bare `JSON.parse` of the same body in the same run, as CPU time. `npm run build && nice node dist/bench/parse-page.js`
 */
import { generatePayments } from '../src/sim/data.js';
import { paymentJson } from '../src/sim/records.js';
import { parse as parseLossless } from 'lossless-json';
import { parseExactJson } from '../src/upstream/exact-json.js';
import { readJsonCarefully } from '../src/upstream/json-reader.js';
import { toListPage } from '../src/upstream/list-page.js';
import { validatePayments } from '../src/upstream/schemas.js';
import { preparePage } from '../src/warehouse/loader.js';

const PAGE = 1000;
const PAGES = Number(process.argv[2] ?? 200);

function bodies(): string[] {
  const now = Date.now();
  const plan = {
    seed: 1,
    orgIndex: 0,
    organizationId: '64f0c0ffee00000000000001',
    creatorIds: ['64f0c0ffee0000000000abcd'],
    now,
    days: 10,
    perDay: Math.ceil((PAGES * PAGE) / 12),
    transfersPerDay: 0,
  };
  const all = generatePayments(plan).map((r) => paymentJson(r, now));
  const out: string[] = [];
  for (let p = 0; p < PAGES; p++) {
    const items = all.slice(p * PAGE, (p + 1) * PAGE);
    out.push(
      `{"data":[${items.join(',')}],"total":${all.length},"page":${p},"size":${PAGE},"totalPages":${Math.ceil(all.length / PAGE)}}`,
    );
  }
  return out;
}

/** CPU time (user + system, GC included) per record: the best of three rounds (the machine is shared). */
function time(label: string, texts: string[], fn: (text: string) => unknown): number {
  for (const t of texts.slice(0, 20)) fn(t); // warm up
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    const started = process.cpuUsage();
    for (const t of texts) fn(t);
    const used = process.cpuUsage(started);
    best = Math.min(best, (used.user + used.system) / (texts.length * PAGE));
  }
  process.stdout.write(`${label.padEnd(44)} ${best.toFixed(2).padStart(6)} µs CPU per record\n`);
  return best;
}

const texts = bodies();
const bare = time('JSON.parse', texts, (t) => JSON.parse(t));
time('parseExactJson (scan + JSON.parse)', texts, (t) => parseExactJson(t));
// one-pass alternatives that keep every number exact, for comparison
time('lossless-json parse (one pass)', texts, (t) => parseLossless(t));
time('careful reader (one pass, json-reader.ts)', texts, (t) => readJsonCarefully(t));
const full = time('parse + list page + validatePayments', texts, (t) => {
  const page = toListPage(parseExactJson(t), { page: 0, size: PAGE });
  if (!page.ok) throw new Error(page.detail);
  const { valid, rejects } = validatePayments(page.page.items);
  if (rejects.length || valid.length !== page.page.items.length) throw new Error('unexpected rejects');
  return valid;
});
const prepared = time("… + the loader's row preparation", texts, (t) => {
  const page = toListPage(parseExactJson(t), { page: 0, size: PAGE });
  if (!page.ok) throw new Error(page.detail);
  const { valid, rejects } = validatePayments(page.page.items);
  return preparePage({ source: 's', stream: 'payments', organizationId: null, records: valid, rejects });
});
process.stdout.write(
  `ratio to bare JSON.parse: ${(full / bare).toFixed(2)}x validated, ${(prepared / bare).toFixed(2)}x prepared\n`,
);
