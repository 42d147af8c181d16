import {
  type Bus,
  type EventEnvelope,
  type EventHandler,
  envelope,
  type NoticeHandler,
  type Subscription,
} from "./bus.ts";

const MAX_ATTEMPTS = 5;

/** Settles a delivered event's `deliver` call once its handler is done (no retry then). */
type Settle = (err?: unknown) => void;

/** One subscription: the events dispatched to its handler and not yet handed to it. */
interface Lane {
  readonly handler: EventHandler;
  events: EventEnvelope[];
  attempts: number[];
  /** Per event: its `deliver` caller, or undefined for a published event. */
  settles: (Settle | undefined)[];
  scheduled: boolean;
}

/**
 * In-process bus for the all-in-one mode and tests: same contract as the BullMQ bus. Events
 * dispatched to a handler in one turn are handed to it together in a later turn (one
 * `setImmediate` per handler and turn, not one per event), each in its own call, so a failure
 * redelivers only that event.
 */
export class MemoryBus implements Bus {
  readonly kind = "memory" as const;
  private readonly lanes = new Map<string, Lane[]>();
  private readonly backlog = new Map<string, EventEnvelope[]>();
  private readonly next = new Map<string, number>();
  /** Listeners of notices by topic: each gets every notice. */
  private readonly listeners = new Map<string, Set<NoticeHandler>>();
  /** Events dispatched and not yet handled (or failed): what `drain` waits for. */
  private inFlight = 0;
  private idle: (() => void)[] = [];
  private closed = false;

  async publish<T>(topic: string, data: T, options?: { id?: string; time?: string }): Promise<EventEnvelope<T>> {
    if (this.closed) throw new Error("bus is closed");
    const event = envelope(topic, data, options);
    const lanes = this.lanes.get(topic);
    if (!lanes?.length) {
      // Kept until a consumer subscribes, as a queue would keep it.
      const list = this.backlog.get(topic) ?? [];
      list.push(event);
      this.backlog.set(topic, list);
    } else {
      this.dispatch(topic, event as EventEnvelope, 1);
    }
    return event;
  }

  /**
   * Hands the event to a subscribed handler and settles once it is done: resolved when the
   * handler resolved, rejected when it threw (not retried: the caller keeps the event) or when no
   * handler is subscribed (not kept for a later subscriber either).
   */
  deliver<T>(topic: string, data: T, options?: { id?: string; time?: string }): Promise<void> {
    if (this.closed) return Promise.reject(new Error("bus is closed"));
    if (!this.lanes.get(topic)?.length) return Promise.reject(new Error(`no consumer of ${topic}`));
    return new Promise<void>((resolve, reject) => {
      this.dispatch(topic, envelope(topic, data, options) as EventEnvelope, 1, (err) =>
        err === undefined ? resolve() : reject(err),
      );
    });
  }

  private dispatch(topic: string, event: EventEnvelope, attempt: number, settle?: Settle): void {
    const lanes = this.lanes.get(topic);
    if (!lanes?.length) return;
    const index = (this.next.get(topic) ?? 0) % lanes.length;
    this.next.set(topic, index + 1);
    const lane = lanes[index]!;
    lane.events.push(event);
    lane.attempts.push(attempt);
    lane.settles.push(settle);
    this.inFlight++;
    if (!lane.scheduled) {
      lane.scheduled = true;
      setImmediate(() => this.run(lane, topic));
    }
  }

  private run(lane: Lane, topic: string): void {
    const { events, attempts, settles } = lane;
    lane.events = [];
    lane.attempts = [];
    lane.settles = [];
    lane.scheduled = false;
    for (let i = 0; i < events.length; i++) {
      void this.handle(lane.handler, topic, events[i]!, attempts[i]!, settles[i]);
    }
  }

  private async handle(
    handler: EventHandler,
    topic: string,
    event: EventEnvelope,
    attempt: number,
    settle: Settle | undefined,
  ): Promise<void> {
    try {
      await handler(event);
      settle?.();
    } catch (err) {
      if (settle) settle(err ?? new Error(`handler of ${topic} failed`));
      else if (attempt < MAX_ATTEMPTS && !this.closed) {
        setTimeout(() => this.dispatch(topic, event, attempt + 1), 10 * 2 ** attempt).unref();
      }
    } finally {
      if (--this.inFlight === 0) this.wake();
    }
  }

  private wake(): void {
    const idle = this.idle;
    this.idle = [];
    for (const resolve of idle) resolve();
  }

  async subscribe<T>(topic: string, handler: EventHandler<T>): Promise<Subscription> {
    const lane: Lane = { handler: handler as EventHandler, events: [], attempts: [], settles: [], scheduled: false };
    const list = this.lanes.get(topic) ?? [];
    list.push(lane);
    this.lanes.set(topic, list);
    const waiting = this.backlog.get(topic);
    if (waiting) {
      this.backlog.delete(topic);
      for (const event of waiting) this.dispatch(topic, event, 1);
    }
    return {
      close: async () => {
        // Events already dispatched to this handler are still handed to it.
        const current = this.lanes.get(topic) ?? [];
        this.lanes.set(
          topic,
          current.filter((l) => l !== lane),
        );
      },
    };
  }

  /** Hands the notice to every listener of the topic in a later turn; none listening, it is dropped. */
  async notify<T>(topic: string, data: T): Promise<void> {
    if (this.closed) throw new Error("bus is closed");
    const listeners = this.listeners.get(topic);
    if (!listeners?.size) return;
    const notice = envelope(topic, data) as EventEnvelope;
    const handlers = [...listeners];
    setImmediate(() => {
      for (const handler of handlers) {
        try {
          handler(notice);
        } catch {
          // A notice is not retried; one listener's failure is not another's.
        }
      }
    });
  }

  async listen<T>(topic: string, handler: NoticeHandler<T>): Promise<Subscription> {
    let listeners = this.listeners.get(topic);
    if (!listeners) {
      listeners = new Set();
      this.listeners.set(topic, listeners);
    }
    listeners.add(handler as NoticeHandler);
    return {
      close: async () => {
        listeners.delete(handler as NoticeHandler);
      },
    };
  }

  /** Waits until every event dispatched so far has been handled (tests, shutdown). */
  async drain(): Promise<void> {
    while (this.inFlight > 0) await new Promise<void>((resolve) => this.idle.push(resolve));
  }

  async ready(): Promise<boolean> {
    return !this.closed;
  }

  async close(): Promise<void> {
    await this.drain();
    this.closed = true;
    this.lanes.clear();
    this.listeners.clear();
  }
}
