export interface GroupCommitOptions {
  maxBatch?: number;
  /**
   * How long the first item of a batch waits for others before the write starts (default 0: the
   * next turn of the event loop). A few milliseconds gather the calls of a busy replica into one
   * write that runs beside them rather than one write per call on each call's own path.
   */
  delayMs?: number;
}

/**
 * Group commit: items added while a write is in flight (or while the first item waits `delayMs`)
 * form the next write, so N concurrent calls cost about one round trip per batch instead of N.
 * One write runs at a time. Each `add` resolves with its item's result, or rejects with the
 * batch's error.
 */
export class GroupCommit<T, R> {
  private readonly write: (batch: T[]) => Promise<R[]>;
  private readonly maxBatch: number;
  private readonly delayMs: number;
  private queue: { item: T; resolve: (r: R) => void; reject: (err: unknown) => void }[] = [];
  private running: Promise<void> | undefined;

  constructor(write: (batch: T[]) => Promise<R[]>, options: GroupCommitOptions = {}) {
    this.write = write;
    this.maxBatch = options.maxBatch ?? 1000;
    this.delayMs = options.delayMs ?? 0;
  }

  add(item: T): Promise<R> {
    const done = new Promise<R>((resolve, reject) => this.queue.push({ item, resolve, reject }));
    this.kick();
    return done;
  }

  /**
   * Takes an item back out if its batch has not started yet, settling its `add` with `result`
   * instead of a write; false when it is already being (or was) written.
   */
  withdraw(item: T, result: R): boolean {
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const entry = this.queue[i]!;
      if (entry.item !== item) continue;
      this.queue.splice(i, 1);
      entry.resolve(result);
      return true;
    }
    return false;
  }

  /** Resolves once everything added so far was written (or failed). */
  async drain(): Promise<void> {
    while (this.running || this.queue.length > 0) {
      this.kick();
      await this.running;
    }
  }

  private kick(): void {
    if (this.running || this.queue.length === 0) return;
    const delay = this.delayMs;
    this.running = new Promise<void>((resolve) => (delay > 0 ? setTimeout(resolve, delay) : setImmediate(resolve)))
      .then(() => this.flush())
      .finally(() => {
        this.running = undefined;
        this.kick();
      });
  }

  private async flush(): Promise<void> {
    const batch = this.queue.splice(0, this.maxBatch);
    if (batch.length === 0) return;
    try {
      const results = await this.write(batch.map((b) => b.item));
      for (const [i, b] of batch.entries()) b.resolve(results[i] as R);
    } catch (err) {
      for (const b of batch) b.reject(err);
    }
  }
}
