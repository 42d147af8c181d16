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
 *
 * One write runs at a time: batches of the same organizations would queue on the same clock rows
 * anyway, and while a write runs the next batch fills up, so the batch size follows the load.
 */
export class MicroBatcher<T> {
  private readonly write: (items: T[]) => Promise<void>;
  private readonly maxSize: number;
  private readonly maxWaitMs: number;
  private waiting: Waiting<T>[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(write: (items: T[]) => Promise<void>, options: { maxSize?: number; maxWaitMs?: number } = {}) {
    this.write = write;
    this.maxSize = options.maxSize ?? 1000;
    this.maxWaitMs = options.maxWaitMs ?? 10;
  }

  add(item: T): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ item, resolve, reject });
      if (this.running) return;
      if (this.waiting.length >= this.maxSize) this.start();
      else if (!this.timer) this.timer = setTimeout(() => this.start(), this.maxWaitMs);
    });
  }

  private start(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.running || this.waiting.length === 0) return;
    const batch = this.waiting.splice(0, this.maxSize);
    this.running = this.write(batch.map((w) => w.item)).then(
      () => {
        for (const w of batch) w.resolve();
      },
      (err) => {
        for (const w of batch) w.reject(err);
      },
    );
    void this.running.finally(() => {
      this.running = undefined;
      if (this.waiting.length >= this.maxSize) this.start();
      else if (this.waiting.length > 0) this.timer = setTimeout(() => this.start(), this.maxWaitMs);
    });
  }

  /** Writes everything waiting and returns once no write is in flight. */
  async drain(): Promise<void> {
    for (;;) {
      if (this.running) await this.running.catch(() => {});
      else if (this.waiting.length > 0) this.start();
      else return;
    }
  }
}
