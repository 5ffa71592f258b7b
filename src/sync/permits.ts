/**
 * Permits whose number may change at any moment: as many holders as `capacity()` says when each one is
 * let in, waiters served oldest first. A smaller capacity lets nobody new in until enough holders left;
 * a larger one takes effect at the next release or `wake()`.
 */
export class Permits {
  private holders = 0;
  private readonly waiting: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  private closed: Error | null = null;
  private peakHolders = 0;

  constructor(private readonly capacity: () => number) {}

  /** Holders now. */
  get held(): number {
    return this.holders;
  }

  /** Waiters now. */
  get queued(): number {
    return this.waiting.length;
  }

  /** The most holders there were when one was let in, since the last `resetPeak`. */
  get peak(): number {
    return this.peakHolders;
  }

  resetPeak(): void {
    this.peakHolders = 0;
  }

  /** Resolves when a permit is held; the returned function gives it back (once; later calls do nothing). */
  async take(): Promise<() => void> {
    if (this.closed) throw this.closed;
    if (this.holders < this.capacity() && this.waiting.length === 0) this.holders += 1;
    else await new Promise<void>((resolve, reject) => this.waiting.push({ resolve, reject })); // wake() counts it in
    this.peakHolders = Math.max(this.peakHolders, this.holders);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holders -= 1;
      this.wake();
    };
  }

  /** Lets waiters in, oldest first, while the capacity allows (call it when the capacity grew). */
  wake(): void {
    while (this.waiting.length > 0 && this.holders < this.capacity()) {
      this.holders += 1;
      this.waiting.shift()?.resolve();
    }
  }

  /** Refuses every waiter and every later `take` with `reason` (a worker shutting down); holders keep theirs. */
  close(reason: Error): void {
    this.closed = reason;
    for (const waiter of this.waiting.splice(0)) waiter.reject(reason);
  }
}
