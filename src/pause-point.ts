/**
 * Named pause points for the crash drills. When `PAYSYNC_PAUSE_AT` names a point (or lists several,
 * comma-separated), the process says so on stderr (`paysync: paused at NAME`) each time it reaches one and
 * holds that flow there until it is killed, so a drill's SIGKILL lands exactly where it means to, on an
 * observed event, instead of after a guessed sleep. Unset (as in production), a pause point costs one
 * comparison and does nothing.
 *
 * Points: export:files-written, export:before-publish, export:after-rename (src/reconcile/export-day.ts);
 * window:mid-read (a backfill window asks for a page after the first), window:before-verdict (its rows
 * and sync-log verdict committed, the backfill item not yet marked done), scan:page-committed (a transfers
 * full scan asks for a page after the first: the earlier pages are committed), scan:before-verdict
 * (src/sync/run-work.ts).
 */
export const PAUSE_ANNOUNCEMENT = 'paysync: paused at ';

export async function pausePoint(name: string): Promise<void> {
  const at = process.env.PAYSYNC_PAUSE_AT;
  if (at === undefined || (at !== name && !at.split(',').includes(name))) return;
  process.stderr.write(`${PAUSE_ANNOUNCEMENT}${name}\n`);
  // a timer keeps the event loop alive: the process waits here until the drill kills it
  await new Promise<never>(() => setInterval(() => undefined, 60_000));
}
