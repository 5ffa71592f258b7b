/**
 * `npm run build && nice node dist/bench/history.js [--days 200] [--per-day 100000]`: years of history.
 * Generates (once, kept) a warehouse of DAYS × PER_DAY payments straight into PostgreSQL, and the same
 * at 2 days, then measures what people run daily against both (see README "Years of history").
 *   --rounds N (3)      measurement rounds, alternating the two sizes; figures are medians
 *   --generate-only     only make sure both databases exist
 */
import { totalmem } from 'node:os';
import { ensureHistory, type HistorySpec } from './history-fixture.js';
import { wholeArg } from './lib/args.js';
import { measureHistory, MEASURES, type HistoryFigures } from './history-measure.js';

const say = (line: string) => process.stdout.write(`${line}\n`);

const serverUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const perDay = wholeArg('--per-day', 100_000);
const large: HistorySpec = { days: wholeArg('--days', 200), perDay, transfersPerDay: 5_000 };
const small: HistorySpec = { ...large, days: 2 };

// Rounds alternate the two sizes, so a busy spell on the (shared) machine hits both alike; each figure
// is the median over the rounds.
const rounds = wholeArg('--rounds', 3);
const urls: string[] = [];
for (const spec of [small, large]) {
  say(`history of ${spec.days} days × ${spec.perDay} payments`);
  urls.push(await ensureHistory(serverUrl, spec, say));
}
const perSize: HistoryFigures[][] = [[], []];
if (!process.argv.includes('--generate-only')) {
  for (let r = 1; r <= rounds; r++) {
    for (const [i, url] of urls.entries()) {
      say(`round ${r}/${rounds}: ${i === 0 ? 'small' : 'large'} history`);
      perSize[i]!.push(await measureHistory(url));
    }
  }
}
const mid = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)] as number;
const figures: HistoryFigures[] = perSize
  .filter((runs) => runs.length > 0)
  .map((runs) => ({
    payments: runs.at(-1)!.payments,
    databaseBytes: runs.at(-1)!.databaseBytes,
    seconds: Object.fromEntries(
      MEASURES.map((m) => [m, mid(runs.map((f) => f.seconds[m]))]),
    ) as HistoryFigures['seconds'],
  }));
if (figures.length === 2) {
  const [a, b] = figures as [HistoryFigures, HistoryFigures];
  const gb = (bytes: number) => `${(bytes / 1e9).toFixed(1)} GB`;
  say('');
  say(
    `| what | ${a.payments.toLocaleString('en')} payments (${gb(a.databaseBytes)}) | ${b.payments.toLocaleString('en')} payments (${gb(b.databaseBytes)}) | growth | goal ≤ 1.5× |`,
  );
  say('|---|---|---|---|---|');
  for (const m of MEASURES) {
    const ratio = b.seconds[m] / a.seconds[m];
    say(
      `| ${m} | ${a.seconds[m].toFixed(3)} s | ${b.seconds[m].toFixed(3)} s | ${ratio.toFixed(2)}× | ${ratio <= 1.5 ? 'met' : 'MISSED'} |`,
    );
  }
  say(
    `(machine: ${gb(totalmem())} RAM; databases kept for the next run: drop paysync_bench_history_* to regenerate)`,
  );
}
