/** `paysync export --day YYYY-MM-DD`: writes (or restates) that day's reconciliation pack now. */
import { loadSettings } from '../../config/settings.js';
import { exportDay } from '../../reconcile/export-day.js';
import { checkPostgres, createRuntime } from '../../runtime.js';
import { parseCommandArgs, requireDay } from '../args.js';

const USAGE = 'paysync export --day YYYY-MM-DD';

export async function run(argv: string[]): Promise<number> {
  const args = parseCommandArgs(argv, { day: { type: 'string' } }, USAGE);
  const day = requireDay(args.day, '--day');
  const settings = loadSettings();
  const runtime = await createRuntime(settings, { name: 'paysync-export' });
  try {
    await checkPostgres(runtime.pool, settings.DATABASE_URL);
    const r = await exportDay(runtime, day);
    const what = r.unchanged
      ? `unchanged, still version ${r.version}`
      : r.restated
        ? `restated as version ${r.version}`
        : `version ${r.version}`;
    process.stdout.write(
      `${day} (${settings.REPORT_TIMEZONE}): ${what}, ${r.state}; ${r.counts.payments} payments, ` +
        `${r.counts.transfers} transfers\n  ${r.dir}\n`,
    );
    return 0;
  } finally {
    await runtime.close();
  }
}
