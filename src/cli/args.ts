import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from '../errors.js';

/** node:util parseArgs, with its errors turned into one-line usage errors (exit 2). */
export function parseCommandArgs<T extends NonNullable<ParseArgsConfig['options']>>(
  argv: string[],
  options: T,
  usage: string,
) {
  try {
    return parseArgs({ args: argv, options, strict: true, allowPositionals: false }).values;
  } catch (error) {
    throw new UsageError(`${(error as Error).message.split('\n')[0]}; usage: ${usage}`);
  }
}

export function requireDay(value: unknown, flag: string): string {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    throw new UsageError(
      `${flag} must be a day YYYY-MM-DD${value === undefined ? ' (missing)' : ` (got "${String(value)}")`}`,
    );
  }
  return value;
}
