import { type Database, migrateToLatest } from "@agentplane/db";
import { type Bus, createOutbox, MemoryBus, type OutboxTuning, outboxMigrations } from "@agentplane/events";
import { type Caller, silentLogger } from "@agentplane/service-kit";
import { SANDBOX_SCHEMA } from "../src/app.ts";
import { migrations } from "../src/db/migrations/index.ts";
import type { SandboxDB } from "../src/db/schema.ts";
import type { LocalDriver } from "../src/driver/local/local-driver.ts";
import type { SandboxDeps } from "../src/services/context.ts";
import { ShellSessions } from "../src/services/shell-sessions.ts";
import { newDriver } from "./helpers.ts";

/**
 * The service's outbox on `database`, started and relaying to `bus` as the service's is: a verb's
 * audit records reach the bus through it. Stop it (`outbox.stop()`) when done.
 */
export function sandboxOutbox(database: Database, bus: Bus, tuning: OutboxTuning = {}): Pick<SandboxDeps, "outbox"> {
  const outbox = createOutbox({ database, schema: SANDBOX_SCHEMA, bus, logger: silentLogger(), ...tuning });
  outbox.start();
  return { outbox };
}

export interface VerbFixture {
  deps: SandboxDeps & { sessions: ShellSessions };
  driver: LocalDriver;
  bus: Bus;
  events: { action: string; details?: Record<string, unknown> }[];
  actor: Caller;
  close(): Promise<void>;
}

/**
 * The service's verbs on a real database, outbox, bus and driver. Authorization is not exercised here
 * (route tests go through tenancy): verbs run after it, so no authorizer is consulted.
 */
export async function verbFixture(
  database: Database,
  options: { driver?: Parameters<typeof newDriver>[0]; outbox?: OutboxTuning } = {},
): Promise<VerbFixture> {
  // With the outbox's tables, in the order the service applies them (0002 between 0001 and 0003).
  await migrateToLatest(database, SANDBOX_SCHEMA, { ...migrations, ...outboxMigrations("0002") });
  const bus = new MemoryBus();
  const events: VerbFixture["events"] = [];
  await bus.subscribe("audit.recorded", async (e) => {
    events.push(e.data as VerbFixture["events"][number]);
  });
  const driver = newDriver(options.driver);
  const base = {
    db: database.forSchema<SandboxDB>(SANDBOX_SCHEMA),
    database,
    bus,
    ...sandboxOutbox(database, bus, options.outbox),
    driver,
    authorizer: {
      check: () => Promise.reject(new Error("verbs do not authorize; routes do")),
    },
    logger: silentLogger(),
    config: { apiUrl: "http://platform.test" },
  };
  const sessions = new ShellSessions(base);
  return {
    deps: { ...base, sessions },
    driver,
    bus,
    events,
    actor: { principal: { type: "user", id: "usr_test" }, orgId: "org_test" },
    async close() {
      sessions.closeAll();
      await driver.close();
      await base.outbox.stop();
      await bus.close();
    },
  };
}
