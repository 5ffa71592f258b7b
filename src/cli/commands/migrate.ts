import { loadSettings } from '../../config/settings.js';
import { createLogger } from '../../log.js';
import { migrate } from '../../warehouse/migrate.js';

export async function run(argv: string[]): Promise<number> {
  if (argv.length > 0) throw new (await import('../../errors.js')).UsageError('migrate takes no options');
  const settings = loadSettings();
  const log = createLogger({ level: settings.LOG_LEVEL, format: settings.LOG_FORMAT });
  const result = await migrate(settings.DATABASE_URL, { log });
  const lines = [
    result.applied.length
      ? `applied ${result.applied.length} migration(s): ${result.applied.join(', ')}`
      : `database is up to date (${result.alreadyApplied} migrations applied)`,
  ];
  if (result.views.length)
    lines.push(`applied ${result.views.length} view file(s): ${result.views.join(', ')}`);
  process.stdout.write(`${lines.join('\n')}\n`);
  return 0;
}
