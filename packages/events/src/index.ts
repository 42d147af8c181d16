export { BullMqBus, type BullMqBusOptions } from "./bullmq-bus.ts";
export type { Bus, EventEnvelope, EventHandler, SubscribeOptions, Subscription } from "./bus.ts";
export { envelope } from "./bus.ts";
export { createBus } from "./create-bus.ts";
export { MemoryBus } from "./memory-bus.ts";
