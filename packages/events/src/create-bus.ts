import type { Bus } from "./bus.ts";
import { MemoryBus } from "./memory-bus.ts";

/**
 * BullMQ when a Redis URL is configured, in memory otherwise (the embedded mode). BullMQ and its
 * Redis client are loaded only then: the embedded platform never pays for them.
 */
export async function createBus(options: { redisUrl?: string | undefined; prefix?: string }): Promise<Bus> {
  if (options.redisUrl) {
    const { BullMqBus } = await import("./bullmq-bus.ts");
    return new BullMqBus({ url: options.redisUrl, ...(options.prefix ? { prefix: options.prefix } : {}) });
  }
  return new MemoryBus();
}
