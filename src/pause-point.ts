/**
 * Named pause points for the crash drills. When `PAYSYNC_PAUSE_AT` names a point, the process says so on
 * stderr (`paysync: paused at NAME`) and waits there until it is killed, so a drill's SIGKILL lands exactly
 * where it means to, on an observed event, instead of after a guessed sleep. Unset (as in production), a
 * pause point costs one comparison and does nothing.
 */
export const PAUSE_ANNOUNCEMENT = 'paysync: paused at ';

export async function pausePoint(name: string): Promise<void> {
  if (process.env.PAYSYNC_PAUSE_AT !== name) return;
  process.stderr.write(`${PAUSE_ANNOUNCEMENT}${name}\n`);
  // a timer keeps the event loop alive: the process waits here until the drill kills it
  await new Promise<never>(() => setInterval(() => undefined, 60_000));
}
