import { BullMqBus } from "./bullmq-bus.ts";
import type { Bus } from "./bus.ts";
import { MemoryBus } from "./memory-bus.ts";

/** BullMQ when a Redis URL is configured, in memory otherwise (the embedded mode). */
export function createBus(options: { redisUrl?: string | undefined; prefix?: string }): Bus {
  if (options.redisUrl) {
    return new BullMqBus({ url: options.redisUrl, ...(options.prefix ? { prefix: options.prefix } : {}) });
  }
  return new MemoryBus();
}
