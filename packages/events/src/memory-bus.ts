import { type Bus, type EventEnvelope, type EventHandler, envelope, type Subscription } from "./bus.ts";

const MAX_ATTEMPTS = 5;

/** In-process bus for the all-in-one mode and tests: same contract as the BullMQ bus. */
export class MemoryBus implements Bus {
  readonly kind = "memory" as const;
  private readonly handlers = new Map<string, EventHandler[]>();
  private readonly backlog = new Map<string, EventEnvelope[]>();
  private next = new Map<string, number>();
  private pending = new Set<Promise<void>>();
  private closed = false;

  async publish<T>(topic: string, data: T, options?: { id?: string; time?: string }): Promise<EventEnvelope<T>> {
    if (this.closed) throw new Error("bus is closed");
    const event = envelope(topic, data, options);
    const handlers = this.handlers.get(topic);
    if (!handlers?.length) {
      // Kept until a consumer subscribes, as a queue would keep it.
      const list = this.backlog.get(topic) ?? [];
      list.push(event);
      this.backlog.set(topic, list);
    } else {
      this.dispatch(topic, event as EventEnvelope);
    }
    return event;
  }

  private dispatch(topic: string, event: EventEnvelope, attempt = 1): void {
    const handlers = this.handlers.get(topic);
    if (!handlers?.length) return;
    const index = (this.next.get(topic) ?? 0) % handlers.length;
    this.next.set(topic, index + 1);
    const handler = handlers[index]!;
    const run = (async () => {
      await new Promise((resolve) => setImmediate(resolve));
      try {
        await handler(event);
      } catch {
        if (attempt < MAX_ATTEMPTS && !this.closed) {
          setTimeout(() => this.dispatch(topic, event, attempt + 1), 10 * 2 ** attempt).unref();
        }
      }
    })();
    this.pending.add(run);
    void run.finally(() => this.pending.delete(run));
  }

  async subscribe<T>(topic: string, handler: EventHandler<T>): Promise<Subscription> {
    const list = this.handlers.get(topic) ?? [];
    list.push(handler as EventHandler);
    this.handlers.set(topic, list);
    const waiting = this.backlog.get(topic);
    if (waiting) {
      this.backlog.delete(topic);
      for (const event of waiting) this.dispatch(topic, event);
    }
    return {
      close: async () => {
        const current = this.handlers.get(topic) ?? [];
        this.handlers.set(
          topic,
          current.filter((h) => h !== handler),
        );
      },
    };
  }

  /** Waits until every event dispatched so far has been handled (tests, shutdown). */
  async drain(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  async ready(): Promise<boolean> {
    return !this.closed;
  }

  async close(): Promise<void> {
    await this.drain();
    this.closed = true;
    this.handlers.clear();
  }
}
