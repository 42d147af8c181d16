import { type Bus, isoNow } from "./bus.ts";
import { eventId } from "./event-id.ts";
import type { EnqueueOptions, OutboxLogger } from "./outbox.ts";
import { storablePayload } from "./sanitize.ts";

export interface BufferedPublisherOptions {
  logger?: OutboxLogger;
  /** Events kept while the bus is down; past this the oldest are dropped and logged (default 100,000). */
  maxBuffer?: number;
  maxBackoffMs?: number;
}

/**
 * For producers without a database (the gateway): events that cannot be published wait in a
 * bounded in-memory buffer and are retried with backoff. Unlike the outbox this is not durable:
 * the buffer is lost when the process stops, and the oldest events are dropped once it is full.
 * A producer that must not lose events in the distributed mode writes them through a service that
 * has a database (its outbox) instead.
 */
export class BufferedPublisher {
  private readonly bus: Bus;
  private readonly logger: OutboxLogger | undefined;
  private readonly maxBuffer: number;
  private readonly maxBackoffMs: number;
  private readonly buffer: { topic: string; data: unknown; id: string; time: string }[] = [];
  private failures = 0;
  private timer: NodeJS.Timeout | undefined;
  private inFlight = 0;
  private dropped = 0;

  constructor(bus: Bus, options: BufferedPublisherOptions = {}) {
    this.bus = bus;
    this.logger = options.logger;
    this.maxBuffer = options.maxBuffer ?? 100_000;
    this.maxBackoffMs = options.maxBackoffMs ?? 30_000;
  }

  /** Never throws and never waits for the bus; returns the event id. */
  publish<T>(topic: string, data: T, options: EnqueueOptions = {}): string {
    const event = {
      topic,
      data: storablePayload(data),
      id: options.id ?? eventId(),
      time: options.time ?? isoNow(),
    };
    if (this.buffer.length > 0 || this.failures > 0) {
      // Keep order behind what is already waiting.
      this.keep(event);
      return event.id;
    }
    this.send(event);
    return event.id;
  }

  /** Settles a send that the bus accepted (one function for every event, not a closure each). */
  private readonly sent = (): void => {
    this.failures = 0;
    this.inFlight--;
  };

  private send(event: { topic: string; data: unknown; id: string; time: string }): void {
    this.inFlight++;
    this.bus.publish(event.topic, event.data, { id: event.id, time: event.time }).then(this.sent, (err) => {
      this.failures++;
      this.logger?.warn({ err: (err as Error).message }, "event not published; kept in memory for a retry");
      this.keep(event);
      this.inFlight--;
    });
  }

  private keep(event: { topic: string; data: unknown; id: string; time: string }): void {
    if (this.buffer.length >= this.maxBuffer) {
      this.buffer.shift();
      this.dropped++;
      this.logger?.error({ dropped: this.dropped }, "event buffer full; dropping the oldest event");
    }
    this.buffer.push(event);
    this.scheduleRetry();
  }

  private scheduleRetry(): void {
    if (this.timer) return;
    const delay = Math.min(this.maxBackoffMs, 250 * 2 ** Math.min(this.failures, 10));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, delay);
    this.timer.unref();
  }

  /** Publishes what is buffered, in order, stopping at the first failure. */
  async flush(): Promise<number> {
    let sent = 0;
    while (this.buffer.length > 0) {
      const event = this.buffer[0]!;
      try {
        await this.bus.publish(event.topic, event.data, { id: event.id, time: event.time });
        this.buffer.shift();
        this.failures = 0;
        sent++;
      } catch {
        this.failures++;
        this.scheduleRetry();
        break;
      }
    }
    return sent;
  }

  /** Events waiting for the bus. */
  get pending(): number {
    return this.buffer.length + this.inFlight;
  }

  /** Events dropped because the buffer was full. */
  get droppedCount(): number {
    return this.dropped;
  }

  close(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
