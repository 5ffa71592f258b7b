/** `paysync reconcile --day YYYY-MM-DD`: the warehouse against the service for that day; exit 1 on a mismatch. */
import { loadSettings, requireSources } from '../../config/settings.js';
import { reconcileDay } from '../../reconcile/reconcile.js';
import { formatTable } from '../../reconcile/reconcile-table.js';
import { checkPostgres, createRuntime } from '../../runtime.js';
import { parseCommandArgs, requireDay } from '../args.js';

const USAGE = 'paysync reconcile --day YYYY-MM-DD';

export async function run(argv: string[]): Promise<number> {
  const args = parseCommandArgs(argv, { day: { type: 'string' } }, USAGE);
  const day = requireDay(args.day, '--day');
  const settings = loadSettings();
  requireSources(settings);
  const runtime = await createRuntime(settings, { name: 'paysync-reconcile' });
  try {
    await checkPostgres(runtime.pool, settings.DATABASE_URL);
    const result = await reconcileDay(runtime, day);
    process.stdout.write(formatTable(day, result.rows));
    return result.mismatches === 0 ? 0 : 1;
  } finally {
    await runtime.close();
  }
}
