import { eventId } from "./event-id.ts";

/** What travels on the bus: an id (consumers deduplicate on it), the topic, when it happened, the payload. */
export interface EventEnvelope<T = unknown> {
  id: string;
  topic: string;
  time: string;
  data: T;
}

export type EventHandler<T = unknown> = (event: EventEnvelope<T>) => Promise<void>;

/** Handles a notice; it is not retried, so what it does must not fail for lack of a retry. */
export type NoticeHandler<T = unknown> = (notice: EventEnvelope<T>) => void;

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
  /**
   * A notice for every listener of the topic in every process on this bus (each replica, not one
   * of them, unlike `publish`): at most once, never kept for a listener that is not listening yet
   * and never retried. For telling replicas to drop what they cache, where a lost notice costs no
   * more than the cache's own lifetime. Rejects when the bus cannot take it now.
   */
  notify<T>(topic: string, data: T): Promise<void>;
  /** Listens for the topic's notices (see `notify`) until the subscription is closed. */
  listen<T>(topic: string, handler: NoticeHandler<T>): Promise<Subscription>;
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
