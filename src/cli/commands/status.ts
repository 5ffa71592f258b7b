/** `paysync status [--json]`: per source and stream, where sync stands and what needs attention. */
import { loadSettings, requireSources } from '../../config/settings.js';
import { checkPostgres, createRuntime } from '../../runtime.js';
import { humanDuration } from '../../config/duration.js';
import { createQueue } from '../../../jobs/queue.js';
import { gatherStatus, type StreamStatus } from '../../ops/status-data.js';
import { parseCommandArgs } from '../args.js';

type Row = StreamStatus;

export async function run(argv: string[]): Promise<number> {
  const args = parseCommandArgs(argv, { json: { type: 'boolean' } }, 'paysync status [--json]');
  const settings = loadSettings();
  const sources = requireSources(settings);
  const runtime = await createRuntime(settings, { name: 'paysync-status' });
  try {
    await checkPostgres(runtime.pool, settings.DATABASE_URL);
    const queue = createQueue(runtime.redis, settings.PAYSYNC_QUEUE_PREFIX);
    const status = await gatherStatus({
      pool: runtime.pool,
      checkpoints: runtime.checkpoints,
      sources,
      queue,
    }).finally(() => queue.close());
    const { queue: counts, streams: rows } = status;
    if (args.json) process.stdout.write(`${JSON.stringify({ queue: counts, streams: rows }, null, 2)}\n`);
    else process.stdout.write(renderTable(rows, counts));
    return rows.some((r) => r.incompleteWindows.length > 0) ? 1 : 0;
  } finally {
    await runtime.close();
  }
}

function renderTable(rows: Row[], counts: Record<string, number>): string {
  const header = [
    'source',
    'stream',
    'checkpoint',
    'lag',
    'open',
    'incomplete',
    'rejects',
    'last success',
    'last error',
  ];
  const body = rows.map((r) => [
    r.source,
    r.stream,
    r.checkpoint ?? 'none yet',
    r.lagSeconds === null ? '-' : humanDuration(r.lagSeconds * 1000),
    String(r.openWindows.length),
    String(r.incompleteWindows.length),
    String(r.openRejects),
    r.lastSuccessAt ?? '-',
    r.lastError ?? '-',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  const out = [line(header), ...body.map(line)];
  for (const r of rows)
    for (const w of r.incompleteWindows)
      out.push(`  incomplete ${r.source}/${r.stream} ${w.window}: ${w.detail}`);
  out.push(
    '',
    `queue: ${Object.entries(counts)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}`,
  );
  return `${out.join('\n')}\n`;
}
