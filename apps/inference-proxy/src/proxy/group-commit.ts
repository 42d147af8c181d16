/**
 * Group commit: items added while a write is in flight form the next write, so N concurrent
 * calls cost about one round trip per batch instead of N. One write runs at a time; a lone item
 * is written on the next turn of the event loop. Each `add` resolves with its item's result, or
 * rejects with the batch's error.
 */
export class GroupCommit<T, R> {
  private readonly write: (batch: T[]) => Promise<R[]>;
  private readonly maxBatch: number;
  private queue: { item: T; resolve: (r: R) => void; reject: (err: unknown) => void }[] = [];
  private running: Promise<void> | undefined;

  constructor(write: (batch: T[]) => Promise<R[]>, maxBatch = 1000) {
    this.write = write;
    this.maxBatch = maxBatch;
  }

  add(item: T): Promise<R> {
    const done = new Promise<R>((resolve, reject) => this.queue.push({ item, resolve, reject }));
    this.kick();
    return done;
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
    this.running = new Promise<void>((resolve) => setImmediate(resolve))
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
