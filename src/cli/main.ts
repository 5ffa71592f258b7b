/**
 * The one CLI entry: `paysync <command> [options]`. Each command lives in src/cli/commands/ and returns
 * its exit code: 0 success, 1 the work failed, 2 bad usage or configuration (one line naming it).
 */
import { ConfigError, PaysyncError, ServiceUnreachableError, UsageError, describeError } from '../errors.js';
import { COMMANDS, helpText } from './commands/index.js';
import { guardOutput } from './terminal.js';
import { inSpan } from '../telemetry/tracing.js';

/**
 * The one-shot commands traced as one span each when tracing is on (their requests and SQL beneath it).
 * Not the long-lived ones: a worker's jobs are traces of their own, `backfill` makes its own span (its
 * `--wait` would otherwise hold a trace open for hours), and the simulator and the demo are not paysync's
 * work.
 */
const TRACED = new Set(['migrate', 'sync', 'export', 'reconcile', 'probe', 'verify', 'signoff', 'status']);

export async function runCli(argv: readonly string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(helpText());
    return name === undefined ? 2 : 0;
  }
  if (name === '--version' || name === '-v') {
    process.stdout.write('paysync 0.1.0\n');
    return 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    process.stderr.write(`paysync: unknown command "${name}"; run paysync --help for the list\n`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    process.stdout.write(`${command.usage}\n\n${command.summary}\n`);
    return 0;
  }
  try {
    if (!TRACED.has(name)) return await command.run(rest);
    return await inSpan(`paysync ${name}`, 'internal', { 'paysync.command': name }, async (span) => {
      const code = await command.run(rest);
      span.setAttributes({ 'process.exit.code': code });
      return code;
    });
  } catch (error) {
    return reportFailure(name, error);
  }
}

function reportFailure(command: string, error: unknown): number {
  if (
    error instanceof ConfigError ||
    error instanceof UsageError ||
    error instanceof ServiceUnreachableError
  ) {
    process.stderr.write(`paysync ${command}: ${error.message}\n`);
    return 2;
  }
  const code = error instanceof PaysyncError ? ` [${error.code}]` : '';
  process.stderr.write(`paysync ${command} failed${code}: ${describeError(error)}\n`);
  if (process.env.PAYSYNC_DEBUG && error instanceof Error && error.stack)
    process.stderr.write(`${error.stack}\n`);
  return 1;
}

// Nothing a service sends may drive the terminal: every write from here on is made inert (terminal.ts).
guardOutput(process.stdout);
guardOutput(process.stderr);
const code = await runCli(process.argv.slice(2));
process.exitCode = code;
