/**
 * `paysync export --day YYYY-MM-DD [--allow-incomplete]`: writes (or restates) that day's reconciliation
 * pack now. A future day is a usage error (exit 2); a day sync does not cover yet is refused (exit 1, with
 * the backfill to run) unless --allow-incomplete publishes it marked `incomplete`.
 */
import { loadSettings } from '../../config/settings.js';
import { exportDay } from '../../reconcile/export-day.js';
import { createRuntime, requireMigrated } from '../../runtime.js';
import { parseCommandArgs, requireDay } from '../args.js';

const USAGE = 'paysync export --day YYYY-MM-DD [--allow-incomplete]';

export async function run(argv: string[]): Promise<number> {
  const args = parseCommandArgs(
    argv,
    { day: { type: 'string' }, 'allow-incomplete': { type: 'boolean' } },
    USAGE,
  );
  const day = requireDay(args.day, '--day');
  const settings = loadSettings();
  const runtime = await createRuntime(settings, { name: 'paysync-export' });
  try {
    await requireMigrated(runtime.pool, settings.DATABASE_URL);
    const r = await exportDay(runtime, day, { allowIncomplete: args['allow-incomplete'] === true });
    const what = r.unchanged
      ? `unchanged, still version ${r.version}`
      : r.restated
        ? `restated as version ${r.version}`
        : `version ${r.version}`;
    const q = r.quarantined.payments + r.quarantined.transfers;
    const signed =
      r.signedBefore === null ? '' : `; restated after sign-off of v${r.signedBefore}: needs a new sign-off`;
    process.stdout.write(
      `${day} (${settings.REPORT_TIMEZONE}): ${what}, ${r.state} (${r.stateReason}); ` +
        `${r.counts.payments} payments, ${r.counts.transfers} transfers, ${q} quarantined (rejects.csv)${signed}\n` +
        `  ${r.dir}\n`,
    );
    return 0;
  } finally {
    await runtime.close();
  }
}
