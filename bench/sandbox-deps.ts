import type { Database } from "@agentplane/db";
import { type Bus, createOutbox } from "@agentplane/events";
import type { Logger } from "@agentplane/service-kit";
import { SANDBOX_SCHEMA } from "../apps/sandbox-svc/src/app.ts";
import type { SandboxDB } from "../apps/sandbox-svc/src/db/schema.ts";
import type { SandboxDriver } from "../apps/sandbox-svc/src/driver/types.ts";
import type { SandboxDeps } from "../apps/sandbox-svc/src/services/context.ts";

/**
 * What sandbox-svc's verbs need, for benchmarks that call them directly (no authorizer: verbs run
 * after it), with the service's outbox started on `database` (migrated with `outboxMigrations("0002")`);
 * stop it (`deps.outbox.stop()`) when done.
 */
export function sandboxDeps(database: Database, bus: Bus, driver: SandboxDriver, logger: Logger): SandboxDeps {
  const outbox = createOutbox({ database, schema: SANDBOX_SCHEMA, bus, logger });
  outbox.start();
  return {
    db: database.forSchema<SandboxDB>(SANDBOX_SCHEMA),
    database,
    bus,
    outbox,
    driver,
    authorizer: { check: () => Promise.reject(new Error("unused")) },
    logger,
    config: {},
  };
}
