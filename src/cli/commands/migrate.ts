import { loadSettings } from '../../config/settings.js';
import { createLogger } from '../../log.js';
import { migrate } from '../../warehouse/migrate.js';

export async function run(argv: string[]): Promise<number> {
  if (argv.length > 0) throw new (await import('../../errors.js')).UsageError('migrate takes no options');
  const settings = loadSettings();
  const log = createLogger({ level: settings.LOG_LEVEL, format: settings.LOG_FORMAT });
  const result = await migrate(settings.DATABASE_URL, { log });
  process.stdout.write(
    result.applied.length
      ? `applied ${result.applied.length} migration(s): ${result.applied.join(', ')}\n`
      : `database is up to date (${result.alreadyApplied} migrations applied)\n`,
  );
  return 0;
}
