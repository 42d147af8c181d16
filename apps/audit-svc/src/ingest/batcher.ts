/** Items that are written together, and the promise every one of their callers waits on. */
interface Group<T> {
  items: T[];
  done: Promise<void>;
  resolve: () => void;
  reject: (err: unknown) => void;
}

function group<T>(): Group<T> {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const done = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // A batch nobody waits on any more (its callers gave up) must not surface as unhandled.
  done.catch(() => {});
  return { items: [], done, resolve, reject };
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
  /** Batches to write, oldest first; each holds at most `maxSize` items and only the last one takes more. */
  private groups: Group<T>[] = [];
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(write: (items: T[]) => Promise<void>, options: { maxSize?: number; maxWaitMs?: number } = {}) {
    this.write = write;
    this.maxSize = options.maxSize ?? 1000;
    this.maxWaitMs = options.maxWaitMs ?? 10;
  }

  /**
   * Settles once the batch holding `item` is written. The items of one batch share one promise
   * (the same object for each of them), so adding an item allocates no promise of its own.
   */
  add(item: T): Promise<void> {
    let last = this.groups[this.groups.length - 1];
    if (!last || last.items.length >= this.maxSize) {
      last = group<T>();
      this.groups.push(last);
    }
    last.items.push(item);
    if (!this.running) {
      if (last.items.length >= this.maxSize) this.start();
      else if (!this.timer) this.timer = setTimeout(() => this.start(), this.maxWaitMs);
    }
    return last.done;
  }

  private get full(): boolean {
    return this.groups.length > 1 || (this.groups[0]?.items.length ?? 0) >= this.maxSize;
  }

  private start(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.running) return;
    const batch = this.groups.shift();
    if (!batch) return;
    this.running = this.write(batch.items).then(batch.resolve, batch.reject);
    void this.running.finally(() => {
      this.running = undefined;
      if (this.full) this.start();
      else if (this.groups.length > 0) this.timer = setTimeout(() => this.start(), this.maxWaitMs);
    });
  }

  /** Writes everything waiting and returns once no write is in flight. */
  async drain(): Promise<void> {
    for (;;) {
      if (this.running) await this.running.catch(() => {});
      else if (this.groups.length > 0) this.start();
      else return;
    }
  }
}
