import type { MigrationList } from "@agentplane/db";
import { outboxMigrations } from "@agentplane/events";

export const INFERENCE_SCHEMA = "inference";

/**
 * The inference schema holds only the outbox: usage events are written there before the response
 * ends, so a bus outage does not lose them (applied in this order under an advisory lock).
 */
export const migrations: MigrationList = { ...outboxMigrations("0001") };
