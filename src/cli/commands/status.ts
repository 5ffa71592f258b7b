/** `paysync status [--json]`: per source and stream, where sync stands and what needs attention. */
import { loadSettings, requireSources } from '../../config/settings.js';
import { checkPostgres, createRuntime } from '../../runtime.js';
import { STREAMS } from '../../upstream/schemas.js';
import { formatDuration } from '../../config/duration.js';
import { createQueue } from '../../../jobs/queue.js';
import { parseCommandArgs } from '../args.js';

interface Row {
  source: string;
  stream: string;
  checkpoint: string | null;
  lagSeconds: number | null;
  openWindows: string[];
  incompleteWindows: Array<{ window: string; detail: string }>;
  lastSuccessAt: string | null;
  lastError: string | null;
  openRejects: number;
}

export async function run(argv: string[]): Promise<number> {
  const args = parseCommandArgs(argv, { json: { type: 'boolean' } }, 'paysync status [--json]');
  const settings = loadSettings();
  const sources = requireSources(settings);
  const runtime = await createRuntime(settings, { name: 'paysync-status' });
  try {
    await checkPostgres(runtime.pool, settings.DATABASE_URL);
    const queue = createQueue(runtime.redis, settings.PAYSYNC_QUEUE_PREFIX);
    const counts = await queue.getJobCounts(
      'waiting',
      'active',
      'delayed',
      'prioritized',
      'failed',
      'completed',
    );
    await queue.close();
    const rejects = await openRejects(runtime.pool);
    const rows: Row[] = [];
    for (const source of sources) {
      for (const stream of STREAMS) {
        const s = await runtime.checkpoints.get(source.name, stream);
        rows.push({
          source: source.name,
          stream,
          checkpoint: s.checkpoint?.toISOString() ?? null,
          lagSeconds: s.checkpoint ? Math.round((Date.now() - s.checkpoint.getTime()) / 1000) : null,
          openWindows: s.openWindows,
          incompleteWindows: s.incompleteWindows.map((w) => ({ window: w.window, detail: w.detail })),
          lastSuccessAt: s.lastSuccessAt?.toISOString() ?? null,
          lastError: s.lastError
            ? `${s.lastError.at.toISOString()} ${s.lastError.code}: ${s.lastError.message}`
            : null,
          openRejects: rejects.get(`${source.name}/${stream}`) ?? 0,
        });
      }
    }
    if (args.json) process.stdout.write(`${JSON.stringify({ queue: counts, streams: rows }, null, 2)}\n`);
    else process.stdout.write(renderTable(rows, counts));
    return rows.some((r) => r.incompleteWindows.length > 0) ? 1 : 0;
  } finally {
    await runtime.close();
  }
}

async function openRejects(pool: import('pg').Pool): Promise<Map<string, number>> {
  const { rows } = await pool
    .query<{ source: string; stream: string; n: string }>(
      `SELECT source, stream, count(*) AS n FROM reporting.sync_rejects WHERE resolved_at IS NULL GROUP BY source, stream`,
    )
    .catch(() => ({ rows: [] as Array<{ source: string; stream: string; n: string }> }));
  return new Map(rows.map((r) => [`${r.source}/${r.stream}`, Number(r.n)]));
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
    r.lagSeconds === null ? '-' : formatDuration(r.lagSeconds * 1000),
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
