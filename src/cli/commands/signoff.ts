/**
 * `paysync signoff --day D --by NAME [--note TEXT]`: NAME signs off the day's latest pack version (final
 * only); one line naming the day and version, exit 0; refused with one line saying why, exit 1.
 * `paysync signoff --revoke --day D --by NAME --note TEXT`: revokes the day's sign-off in force (nothing
 * is deleted: the revocation is recorded beside it).
 * `paysync signoff --list [--from D] [--to D] [--pending]`: each day's state (signed, needs sign-off,
 * restated after sign-off, revoked, not final); with --pending, exit 1 when a final day in the range
 * awaits a sign-off (finance's own check).
 * NAME is recorded as given: who may sign is a matter of access to this command and to the database.
 */
import { DateTime } from 'luxon';
import { loadSettings } from '../../config/settings.js';
import { UsageError } from '../../errors.js';
import { revokeSignoff, signOff, SignoffRefusedError } from '../../reconcile/signoff.js';
import type { DaySignoff } from '../../reconcile/signoff-state.js';
import { signoffStates } from '../../reconcile/signoff-store.js';
import { localDayOf } from '../../sync/windows.js';
import { createRuntime, requireMigrated, type Runtime } from '../../runtime.js';
import { parseCommandArgs, requireDay } from '../args.js';
import { oneLine } from '../../terminal-text.js';

const USAGE =
  'paysync signoff --day YYYY-MM-DD --by NAME [--note TEXT] | --revoke --day YYYY-MM-DD --by NAME --note TEXT | --list [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--pending]';
/** Days --list shows without --from. */
const LIST_DAYS = 31;

const OPTIONS = {
  day: { type: 'string' },
  by: { type: 'string' },
  note: { type: 'string' },
  revoke: { type: 'boolean' },
  list: { type: 'boolean' },
  from: { type: 'string' },
  to: { type: 'string' },
  pending: { type: 'boolean' },
} as const;

type Args = ReturnType<typeof parseCommandArgs<typeof OPTIONS>>;

/** A name or note as given, but printable: a control character would reach every terminal that lists it. */
function text(value: unknown, flag: string, required: boolean): string | null {
  if (value === undefined) {
    if (required) throw new UsageError(`${flag} is required; usage: ${USAGE}`);
    return null;
  }
  const s = String(value);
  if (s.trim() === '') throw new UsageError(`${flag} must not be empty`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f]/.test(s))
    throw new UsageError(`${flag} must not hold control characters`);
  return s;
}

/** Flags that belong to another mode are refused rather than ignored. */
function refuse(args: Args, flags: ReadonlyArray<keyof Args>, mode: string): void {
  const stray = flags.filter((f) => args[f] !== undefined);
  if (stray.length > 0)
    throw new UsageError(
      `${stray.map((f) => `--${String(f)}`).join(', ')} cannot be used with ${mode}; usage: ${USAGE}`,
    );
}

export async function run(argv: string[]): Promise<number> {
  const args = parseCommandArgs(argv, OPTIONS, USAGE);
  if (args.list) {
    refuse(args, ['day', 'by', 'note', 'revoke'], '--list');
  } else {
    refuse(args, ['from', 'to', 'pending'], args.revoke ? '--revoke' : 'a sign-off (they go with --list)');
  }
  const day = args.list ? null : requireDay(args.day, '--day');
  const by = args.list ? null : text(args.by, '--by', true);
  const note = args.list ? null : text(args.note, '--note', args.revoke === true);
  const settings = loadSettings();
  const range = args.list ? listRange(args, settings.REPORT_TIMEZONE) : null;
  const runtime = await createRuntime(settings, { name: 'paysync-signoff' });
  try {
    await requireMigrated(runtime.pool, settings.DATABASE_URL);
    if (range) return await list(runtime, range, args.pending === true);
    if (args.revoke) return await revoke(runtime, day as string, by as string, note as string);
    return await sign(runtime, day as string, by as string, note);
  } catch (error) {
    if (!(error instanceof SignoffRefusedError)) throw error;
    process.stderr.write(`paysync signoff: ${oneLine(error.message)}\n`);
    return 1;
  } finally {
    await runtime.close();
  }
}

function listRange(args: Args, zone: string): { from: string; to: string } {
  const today = localDayOf(new Date(), zone);
  const to = args.to === undefined ? today : requireDay(args.to, '--to');
  const from =
    args.from === undefined
      ? (DateTime.fromISO(to, { zone })
          .minus({ days: LIST_DAYS - 1 })
          .toISODate() as string)
      : requireDay(args.from, '--from');
  if (from > to) throw new UsageError(`--from ${from} is after --to ${to}`);
  return { from, to };
}

async function sign(runtime: Runtime, day: string, by: string, note: string | null): Promise<number> {
  const r = await signOff(runtime, { day, by, note });
  const line = r.already
    ? `${day}: v${r.version} is already signed off by ${r.already.by} at ${r.already.at}; nothing recorded`
    : `${day}: v${r.version} signed off by ${by} at ${r.at?.toISOString()} (manifest SHA-256 ${r.manifestSha256})`;
  process.stdout.write(`${oneLine(line)}\n`);
  return 0;
}

async function revoke(runtime: Runtime, day: string, by: string, note: string): Promise<number> {
  const r = await revokeSignoff(runtime, { day, by, note });
  const now = r.state ? r.state.summary : 'no pack on record';
  process.stdout.write(
    `${oneLine(`${day}: the sign-off of v${r.revoked.version} by ${r.revoked.by} is revoked by ${by}; now: ${now}`)}\n`,
  );
  return 0;
}

function row(d: DaySignoff): string[] {
  const signed = d.signed ? `v${d.signed.version} by ${d.signed.by} at ${d.signed.at}` : '-';
  return [d.day, `v${d.version}`, d.packState, d.state, signed, d.summary].map(oneLine);
}

async function list(
  runtime: Runtime,
  range: { from: string; to: string },
  pending: boolean,
): Promise<number> {
  const days = await signoffStates(runtime.pool, range);
  const header = ['day', 'version', 'pack', 'sign-off', 'signed', 'what'];
  const rows = [header, ...days.map(row)];
  const widths = header.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const lines = rows.map((r) =>
    r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0))).join('  '),
  );
  const awaiting = days.filter((d) => d.awaiting);
  const tail =
    days.length === 0
      ? `no pack published from ${range.from} to ${range.to}`
      : awaiting.length === 0
        ? 'no final day awaits a sign-off'
        : `${awaiting.length} final day(s) await a sign-off: ${awaiting.map((d) => d.day).join(', ')}`;
  process.stdout.write(`${days.length === 0 ? '' : `${lines.join('\n')}\n\n`}${tail}\n`);
  return pending && awaiting.length > 0 ? 1 : 0;
}
