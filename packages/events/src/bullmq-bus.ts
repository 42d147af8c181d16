import { Queue, Worker } from "bullmq";
import { Redis, type RedisOptions } from "ioredis";
import {
  type Bus,
  type EventEnvelope,
  type EventHandler,
  envelope,
  type NoticeHandler,
  type SubscribeOptions,
  type Subscription,
} from "./bus.ts";

export interface BullMqBusOptions {
  url: string;
  /** Key prefix, so installations or test suites can share a Redis (default `agentplane`). */
  prefix?: string;
  /** Attempts per event before it is parked as failed (default 10, exponential backoff). */
  attempts?: number;
  /**
   * Longest a publish may take, connection wait included (default 500 ms). Past it the publish
   * fails and the caller's durable fallback (outbox, buffer) keeps the event, so a slow or
   * unreachable Redis never sits on a request's latency. A late success is harmless: the event
   * id is the job id, which BullMQ and the consumers deduplicate on.
   */
  publishTimeoutMs?: number;
}

/** The distributed bus: one BullMQ queue per topic; replicas of a consumer compete for jobs. */
export class BullMqBus implements Bus {
  readonly kind = "bullmq" as const;
  private readonly queues = new Map<string, Queue>();
  private readonly workers = new Set<Worker>();
  private readonly producer: Redis;
  private readonly prefix: string;
  private readonly attempts: number;
  private readonly publishTimeoutMs: number;

  private readonly options: BullMqBusOptions;
  /** The connection notices are heard on (Redis pub/sub), opened by the first `listen`. */
  private noticeConnection: Redis | undefined;
  /** Listeners of notices by channel. */
  private readonly listeners = new Map<string, Set<NoticeHandler>>();

  constructor(options: BullMqBusOptions) {
    this.options = options;
    this.prefix = options.prefix ?? "agentplane";
    this.attempts = options.attempts ?? 10;
    this.publishTimeoutMs = options.publishTimeoutMs ?? 500;
    // Producers fail fast while Redis is down (the caller's outbox keeps the event); they do not queue in memory.
    this.producer = new Redis(options.url, {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      lazyConnect: false,
      retryStrategy: (times) => Math.min(times * 200, 2000),
    });
    this.producer.on("error", () => {});
    // Every topic's Queue (and each connected() wait) listens on this one shared connection.
    this.producer.setMaxListeners(1000);
  }

  private queue(topic: string): Queue {
    let queue = this.queues.get(topic);
    if (!queue) {
      queue = new Queue(topic, { connection: this.producer, prefix: this.prefix });
      queue.on("error", () => {});
      this.queues.set(topic, queue);
    }
    return queue;
  }

  async publish<T>(topic: string, data: T, options?: { id?: string; time?: string }): Promise<EventEnvelope<T>> {
    const event = envelope(topic, data, options);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`event bus did not accept the event within ${this.publishTimeoutMs} ms`)),
        this.publishTimeoutMs,
      );
    });
    const add = (async () => {
      // Shorter than the deadline, so that a bus known to be down says so.
      await this.connected(Math.floor(this.publishTimeoutMs * 0.8));
      await this.queue(topic).add(topic, event, {
        jobId: event.id,
        attempts: this.attempts,
        backoff: { type: "exponential", delay: 500 },
        removeOnComplete: { age: 3600, count: 10_000 },
        removeOnFail: { age: 7 * 24 * 3600 },
      });
    })();
    // The losing side of the race must not surface as an unhandled rejection.
    add.catch(() => {});
    try {
      await Promise.race([add, deadline]);
    } finally {
      clearTimeout(timer);
    }
    return event;
  }

  /** Waits briefly for a connection being made; fails fast when Redis is down. */
  private async connected(timeoutMs = 1000): Promise<void> {
    if (this.producer.status === "ready") return;
    if (
      this.producer.status === "connecting" ||
      this.producer.status === "connect" ||
      this.producer.status === "wait"
    ) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.producer.off("ready", done);
          resolve();
        };
        const timer = setTimeout(done, timeoutMs);
        this.producer.once("ready", done);
      });
    }
    // The status changes while we wait; read it afresh.
    const status: string = this.producer.status;
    if (status !== "ready") throw new Error(`event bus not connected (redis ${status})`);
  }

  async subscribe<T>(topic: string, handler: EventHandler<T>, options: SubscribeOptions = {}): Promise<Subscription> {
    const connectionOptions: RedisOptions = {
      maxRetriesPerRequest: null,
      retryStrategy: (t) => Math.min(t * 200, 2000),
    };
    const connection = new Redis(this.options.url, connectionOptions);
    connection.on("error", () => {});
    const worker = new Worker(topic, async (job) => handler(job.data as EventEnvelope<T>), {
      connection,
      prefix: this.prefix,
      concurrency: options.concurrency ?? 1,
      // Event handlers are short; a job whose worker lost Redis mid-flight (restart, failover) is
      // handed out again within seconds instead of BullMQ's default half minute.
      lockDuration: 10_000,
      stalledInterval: 5_000,
    });
    worker.on("error", () => {});
    this.workers.add(worker);
    return {
      close: async () => {
        this.workers.delete(worker);
        await worker.close();
        connection.disconnect();
      },
    };
  }

  /** Notices travel by Redis pub/sub, one channel per topic under the bus's prefix. */
  private noticeChannel(topic: string): string {
    return `${this.prefix}:notice:${topic}`;
  }

  async notify<T>(topic: string, data: T): Promise<void> {
    await this.connected(Math.floor(this.publishTimeoutMs * 0.8));
    await this.producer.publish(this.noticeChannel(topic), JSON.stringify(envelope(topic, data)));
  }

  /**
   * Resolves once Redis confirmed the subscription. While the connection is down notices are
   * missed (never replayed); it resubscribes when it is back.
   */
  async listen<T>(topic: string, handler: NoticeHandler<T>): Promise<Subscription> {
    const channel = this.noticeChannel(topic);
    const connection = this.noticeConnection ?? this.openNoticeConnection();
    let listeners = this.listeners.get(channel);
    if (!listeners) {
      listeners = new Set();
      this.listeners.set(channel, listeners);
    }
    listeners.add(handler as NoticeHandler);
    if (listeners.size === 1) await connection.subscribe(channel);
    return {
      close: async () => {
        listeners.delete(handler as NoticeHandler);
        if (listeners.size > 0 || this.listeners.get(channel) !== listeners) return;
        this.listeners.delete(channel);
        await connection.unsubscribe(channel).catch(() => {});
      },
    };
  }

  private openNoticeConnection(): Redis {
    const connection = new Redis(this.options.url, {
      maxRetriesPerRequest: null,
      retryStrategy: (t) => Math.min(t * 200, 2000),
    });
    connection.on("error", () => {});
    connection.on("message", (channel: string, message: string) => {
      const listeners = this.listeners.get(channel);
      if (!listeners?.size) return;
      let notice: EventEnvelope;
      try {
        notice = JSON.parse(message) as EventEnvelope;
      } catch {
        return;
      }
      for (const handler of [...listeners]) {
        try {
          handler(notice);
        } catch {
          // A notice is not retried; one listener's failure is not another's.
        }
      }
    });
    this.noticeConnection = connection;
    return connection;
  }

  async ready(): Promise<boolean> {
    if (this.producer.status !== "ready") return false;
    try {
      return (await this.producer.ping()) === "PONG";
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    await Promise.allSettled([...this.workers].map((w) => w.close()));
    await Promise.allSettled([...this.queues.values()].map((q) => q.close()));
    this.listeners.clear();
    this.noticeConnection?.disconnect();
    this.producer.disconnect();
  }
}
