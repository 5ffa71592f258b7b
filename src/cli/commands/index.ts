/** The command table: name, usage, one-line summary, and the function that runs it. */
export interface Command {
  name: string;
  usage: string;
  summary: string;
  run(argv: string[]): Promise<number>;
}

const lazy =
  (load: () => Promise<{ run(argv: string[]): Promise<number> }>): Command['run'] =>
  async (argv) =>
    (await load()).run(argv);

export const COMMANDS: Command[] = [
  {
    name: 'migrate',
    usage: 'paysync migrate',
    summary:
      'Create the database if missing and apply sql/ migrations in order (idempotent, safe to run twice at once).',
    run: lazy(() => import('./migrate.js')),
  },
  {
    name: 'worker',
    usage: 'paysync worker',
    summary: 'Register the repeating schedules and process jobs until SIGTERM/SIGINT, then drain.',
    run: lazy(() => import('./worker.js')),
  },
  {
    name: 'sync',
    usage: 'paysync sync --once [--stream payments|transfers]',
    summary: 'Run one incremental sync tick of every source in this process, then exit.',
    run: lazy(() => import('./sync.js')),
  },
  {
    name: 'backfill',
    usage:
      'paysync backfill --from YYYY-MM-DD --to YYYY-MM-DD [--stream payments|transfers] [--source NAME] [--wait] [--dry-run]',
    summary:
      'Enqueue the windows of an inclusive day range; --wait shows progress, --dry-run shows the plan.',
    run: lazy(() => import('./backfill.js')),
  },
  {
    name: 'probe',
    usage: 'paysync probe [--source NAME] [--json] | --ack FIELD [--stream S] [--by NAME]',
    summary:
      "Measure how the service answers the interface's open points; store and compare with the last probe; list or acknowledge changes in its records' shape.",
    run: lazy(() => import('./probe.js')),
  },
  {
    name: 'export',
    usage: 'paysync export --day YYYY-MM-DD [--allow-incomplete]',
    summary:
      "Write (or restate) that day's reconciliation pack; a day sync does not cover yet is refused unless --allow-incomplete.",
    run: lazy(() => import('./export.js')),
  },
  {
    name: 'reconcile',
    usage: 'paysync reconcile --day YYYY-MM-DD [--json] [--heal]',
    summary:
      'Compare the warehouse with the service for that day, naming the records that differ; --heal re-reads what a re-read can fix; exit 1 on any unexplained difference.',
    run: lazy(() => import('./reconcile.js')),
  },
  {
    name: 'signoff',
    usage:
      'paysync signoff --day YYYY-MM-DD --by NAME [--note TEXT] | --revoke --day YYYY-MM-DD --by NAME --note TEXT | --list [--from D] [--to D] [--pending]',
    summary:
      "Record that NAME signed off the day's latest final pack (or revoke it); --list shows each day's sign-off state, --pending exits 1 when a final day awaits one.",
    run: lazy(() => import('./signoff.js')),
  },
  {
    name: 'verify',
    usage: 'paysync verify --day YYYY-MM-DD [--all-versions]',
    summary:
      "Re-derive the day's latest pack from the warehouse and check it and the files on disk against the manifest; exit 1 naming every difference.",
    run: lazy(() => import('./verify.js')),
  },
  {
    name: 'status',
    usage: 'paysync status [--json]',
    summary:
      "Per source and stream: checkpoint, lag, open windows, queue counts, last error, rejects; each day's last reconcile; exit 1 needs attention, 2 cannot tell.",
    run: lazy(() => import('./status.js')),
  },
  {
    name: 'sim',
    usage: 'paysync sim [--port N] [--seed N] [--days N] [--per-day N] [--api-key K]... [switches]',
    summary: 'Run the built-in payment service simulator.',
    run: lazy(async () => ({ run: (await import('../../sim/cli.js')).runSimCommand })),
  },
  {
    name: 'demo',
    usage: 'paysync demo',
    summary:
      'The whole pipeline on the embedded default: simulator, migrate, backfill, live tick, export, reconcile.',
    run: lazy(() => import('./demo.js')),
  },
];

export function helpText(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  const lines = COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`);
  return [
    'paysync: copies a payment service into PostgreSQL, writes daily reconciliation packs.',
    '',
    'Usage: paysync <command> [options]   (paysync <command> --help for its options)',
    '',
    'Commands:',
    ...lines,
    '',
    'Settings come from the environment and a .env file; see README.md. Exit codes: 0 ok, 1 failed, 2 bad usage/config.',
    '',
  ].join('\n');
}
