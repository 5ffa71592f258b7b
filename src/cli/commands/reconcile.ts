/**
 * `paysync reconcile --day YYYY-MM-DD [--json]`: the warehouse against the service for that day, per
 * source, stream and status, with the records behind every difference. Exit 0 when every difference is
 * explained by quarantined records (listed), 1 on any unexplained difference.
 */
import { loadSettings, requireSources } from '../../config/settings.js';
import { reconcileDay, type ReconcileResult } from '../../reconcile/reconcile.js';
import { formatTable } from '../../reconcile/reconcile-table.js';
import { checkPostgres, createRuntime } from '../../runtime.js';
import { parseCommandArgs, requireDay } from '../args.js';

const USAGE = 'paysync reconcile --day YYYY-MM-DD [--json]';
/** Records printed under the table; `--json` lists them all. */
const LISTED = 20;

export async function run(argv: string[]): Promise<number> {
  const args = parseCommandArgs(argv, { day: { type: 'string' }, json: { type: 'boolean' } }, USAGE);
  const day = requireDay(args.day, '--day');
  const settings = loadSettings();
  requireSources(settings);
  const runtime = await createRuntime(settings, { name: 'paysync-reconcile' });
  try {
    await checkPostgres(runtime.pool, settings.DATABASE_URL);
    const result = await reconcileDay(runtime, day);
    process.stdout.write(
      args.json
        ? jsonText(result)
        : formatTable(day, result.rows, { differences: result.differences, limit: LISTED }),
    );
    return result.mismatches === 0 ? 0 : 1;
  } finally {
    await runtime.close();
  }
}

function jsonText(r: ReconcileResult): string {
  const { day, mismatches, quarantined, rows, differences } = r;
  return `${JSON.stringify({ day, mismatches, quarantined, rows, differences }, null, 2)}\n`;
}
