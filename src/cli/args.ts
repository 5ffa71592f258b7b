import { parseArgs, type ParseArgsConfig } from 'node:util';
import { dayProblem } from '../config/bounds.js';
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

/** A day that exists on the calendar, from FIRST_DAY on (a future day is the caller's decision). */
export function requireDay(value: unknown, flag: string): string {
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    throw new UsageError(
      `${flag} must be a day YYYY-MM-DD${value === undefined ? ' (missing)' : ` (got "${String(value)}")`}`,
    );
  }
  const problem = dayProblem(value, new Date(), true);
  if (problem) throw new UsageError(`${flag} ${problem}`);
  return value;
}

export interface BackfillRange {
  from: string;
  to: string;
  days: number;
  /** What was changed and why (a future --to clamped to today), one line each. */
  notes: string[];
}

/**
 * The days a backfill may cover: from FIRST_DAY to today in the report zone. A future --to is clamped to
 * today (said plainly in `notes`); a future --from is refused. A range longer than `maxDays` needs --yes
 * (a typo like 1900-2100 once queued 73,414 jobs), except for a dry run, which only lists. Pure.
 */
export function backfillRange(
  input: { from: string; to: string; yes: boolean; dryRun: boolean },
  today: string,
  maxDays: number,
): BackfillRange {
  const notes: string[] = [];
  if (input.from > today) throw new UsageError(`--from ${input.from} is in the future (today is ${today})`);
  let to = input.to;
  if (to > today) {
    notes.push(`--to ${to} is in the future: the backfill stops at today, ${today}`);
    to = today;
  }
  if (input.from > to) throw new UsageError(`--from ${input.from} is after --to ${to}`);
  const days =
    Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${input.from}T00:00:00Z`)) / 86_400_000) + 1;
  if (days > maxDays && !input.yes && !input.dryRun) {
    throw new UsageError(
      `--from ${input.from} --to ${to} covers ${days} days, more than BACKFILL_MAX_DAYS (${maxDays}); ` +
        'check the range, and add --yes to queue it anyway',
    );
  }
  return { from: input.from, to, days, notes };
}
