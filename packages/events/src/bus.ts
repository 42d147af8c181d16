import { eventId } from "./event-id.ts";

/** What travels on the bus: an id (consumers deduplicate on it), the topic, when it happened, the payload. */
export interface EventEnvelope<T = unknown> {
  id: string;
  topic: string;
  time: string;
  data: T;
}

export type EventHandler<T = unknown> = (event: EventEnvelope<T>) => Promise<void>;

export interface SubscribeOptions {
  /** Events handled at once by this consumer (default 1). */
  concurrency?: number;
}

export interface Subscription {
  close(): Promise<void>;
}

/**
 * Topic-based event bus. Consumers of one topic compete (each event goes to one of them); a
 * handler that throws gets the event again later (at-least-once), so handlers are idempotent.
 */
export interface Bus {
  readonly kind: "memory" | "bullmq";
  publish<T>(topic: string, data: T, options?: { id?: string; time?: string }): Promise<EventEnvelope<T>>;
  subscribe<T>(topic: string, handler: EventHandler<T>, options?: SubscribeOptions): Promise<Subscription>;
  /**
   * Only on a bus whose consumers run in this process (the memory bus): publishes and resolves
   * once the consumer it went to has handled the event (a durable consumer: stored it), or rejects
   * when no consumer is subscribed or its handler failed (the bus does not retry it then; the
   * caller keeps the event). An outbox uses it to skip its table for events a consumer took.
   */
  deliver?<T>(topic: string, data: T, options?: { id?: string; time?: string }): Promise<void>;
  /** True when the bus can take events now (Redis reachable); for readiness checks. */
  ready(): Promise<boolean>;
  close(): Promise<void>;
}

export function envelope<T>(topic: string, data: T, options: { id?: string; time?: string } = {}): EventEnvelope<T> {
  return { id: options.id ?? eventId(), topic, time: options.time ?? isoNow(), data };
}

let lastMs = Number.NaN;
let lastIso = "";

/**
 * `new Date().toISOString()`, formatted once per millisecond: events of the same millisecond
 * (a burst of calls) share the text instead of each formatting it again.
 */
export function isoNow(): string {
  const ms = Date.now();
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastIso;
}
