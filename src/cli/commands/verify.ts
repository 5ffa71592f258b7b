/**
 * `paysync verify --day YYYY-MM-DD [--all-versions]`: re-derives the day's latest pack from the warehouse
 * and checks it and the files on disk against the manifest (reconcile/verify.ts). Exit 0 with "verified"
 * and the version when everything agrees; exit 1 naming every difference.
 */
import { loadSettings, requireSources } from '../../config/settings.js';
import { verifyDay } from '../../reconcile/verify.js';
import { createRuntime, requireMigrated } from '../../runtime.js';
import { parseCommandArgs, requireDay } from '../args.js';
import { oneLine } from '../../terminal-text.js';

const USAGE = 'paysync verify --day YYYY-MM-DD [--all-versions]';

export async function run(argv: string[]): Promise<number> {
  const args = parseCommandArgs(
    argv,
    { day: { type: 'string' }, 'all-versions': { type: 'boolean' } },
    USAGE,
  );
  const day = requireDay(args.day, '--day');
  const settings = loadSettings();
  requireSources(settings);
  const runtime = await createRuntime(settings, { name: 'paysync-verify' });
  try {
    await requireMigrated(runtime.pool, settings.DATABASE_URL);
    const r = await verifyDay(runtime, day, { allVersions: args['all-versions'] === true });
    const which = r.version === null ? '' : ` v${r.version} (${r.state})`;
    if (r.differences.length === 0) {
      const scope = args['all-versions'] ? 'every version on disk matches its manifest; ' : '';
      process.stdout.write(
        `${day}${which}: verified: the files on disk match the manifest, ${scope}the warehouse gives the same pack\n`,
      );
      return 0;
    }
    const lines = r.differences.map((d) => oneLine(d));
    process.stdout.write(`${day}${which}: ${r.differences.length} difference(s)\n${lines.join('\n')}\n`);
    return 1;
  } finally {
    await runtime.close();
  }
}
