/**
 * `paysync reconcile --day YYYY-MM-DD [--json] [--heal]`: the warehouse against the service for that day,
 * per source, stream and status, with the records behind every difference. With --heal, a difference a
 * re-read can fix is re-read and reconciled again (heal.ts). Exit 0 when every difference is explained by
 * quarantined records (listed), 1 on any unexplained difference (or when the service cannot be reached:
 * then nothing is recorded).
 */
import { loadSettings, requireSources } from '../../config/settings.js';
import { reconcileAndHeal } from '../../reconcile/heal.js';
import { reconcileDay, type ReconcileResult } from '../../reconcile/reconcile.js';
import { formatTable } from '../../reconcile/reconcile-table.js';
import { createRuntime, requireMigrated } from '../../runtime.js';
import { parseCommandArgs, requireDay } from '../args.js';

const USAGE = 'paysync reconcile --day YYYY-MM-DD [--json] [--heal]';
/** Records printed under the table; `--json` lists them all. */
const LISTED = 20;

export async function run(argv: string[]): Promise<number> {
  const args = parseCommandArgs(
    argv,
    { day: { type: 'string' }, json: { type: 'boolean' }, heal: { type: 'boolean' } },
    USAGE,
  );
  const day = requireDay(args.day, '--day');
  const settings = loadSettings();
  requireSources(settings);
  const runtime = await createRuntime(settings, { name: 'paysync-reconcile' });
  try {
    await requireMigrated(runtime.pool, settings.DATABASE_URL);
    const onWait = (holder: string) =>
      process.stderr.write(`another reconcile of ${day} is running (${holder}); waiting for it to end\n`);
    const progress = (line: string) => process.stderr.write(`${line}\n`);
    const result = args.heal
      ? (await reconcileAndHeal(runtime, day, { onWait, onStep: progress })).result
      : await reconcileDay(runtime, day, { onWait });
    const text = args.json
      ? jsonText(result)
      : formatTable(day, result.rows, { differences: result.differences, limit: LISTED });
    process.stdout.write(text);
    return result.mismatches === 0 ? 0 : 1;
  } finally {
    await runtime.close();
  }
}

function jsonText(r: ReconcileResult): string {
  const { day, mismatches, quarantined, rows, differences } = r;
  return `${JSON.stringify({ day, mismatches, quarantined, rows, differences }, null, 2)}\n`;
}
