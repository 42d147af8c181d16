export { BufferedPublisher, type BufferedPublisherOptions } from "./buffered-publisher.ts";
export type {
  Bus,
  EventEnvelope,
  EventHandler,
  NoticeHandler,
  SubscribeOptions,
  Subscription,
} from "./bus.ts";
export { envelope } from "./bus.ts";
export { createBus } from "./create-bus.ts";
export {
  type DomainEvent,
  type DomainEventContext,
  domainAuditRecord,
  enqueueAuditRecord,
  recordDomainEvent,
  recordStandaloneEvent,
  withDomainEvents,
} from "./domain-events.ts";
export { eventId } from "./event-id.ts";
export { MemoryBus } from "./memory-bus.ts";
export {
  createOutbox,
  type EnqueueOptions,
  type Outbox,
  type OutboxLogger,
  type OutboxOptions,
  type OutboxTuning,
  outboxMigration,
  outboxMigrations,
  type PublishManyOptions,
} from "./outbox.ts";
export { storablePayload } from "./sanitize.ts";
