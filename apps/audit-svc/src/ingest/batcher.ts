interface Waiting<T> {
  item: T;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * Collects items handed in one at a time (one per bus job) and writes them in one multi-row
 * statement. Each caller's promise settles only after the write of its batch committed, so the
 * bus acknowledges a job only once its event is stored; a failed batch fails every job in it,
 * and the bus redelivers them (storage is idempotent).
 */
export class MicroBatcher<T> {
  private readonly write: (items: T[]) => Promise<void>;
  private readonly maxSize: number;
  private readonly maxWaitMs: number;
  private waiting: Waiting<T>[] = [];
  private timer: NodeJS.Timeout | undefined;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(write: (items: T[]) => Promise<void>, options: { maxSize?: number; maxWaitMs?: number } = {}) {
    this.write = write;
    this.maxSize = options.maxSize ?? 500;
    this.maxWaitMs = options.maxWaitMs ?? 20;
  }

  add(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (this.waiting.length >= this.maxSize) this.flush();
      else if (!this.timer) this.timer = setTimeout(() => this.flush(), this.maxWaitMs);
    });
  }

  flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.waiting;
    this.waiting = [];
    if (batch.length === 0) return Promise.resolve();
    const run = this.write(batch.map((w) => w.item)).then(
      () => {
        for (const w of batch) w.resolve();
      },
      (err) => {
        for (const w of batch) w.reject(err);
      },
    );
    this.inFlight.add(run);
    void run.finally(() => this.inFlight.delete(run));
    return run;
  }

  /** Writes what is waiting and waits for every write in flight. */
  async drain(): Promise<void> {
    await this.flush();
    await Promise.allSettled([...this.inFlight]);
  }
}
