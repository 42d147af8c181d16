import type { Database } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { generateInternalKeys, silentLogger } from "@agentplane/service-kit";
import type { FakeKubeApiServer } from "@agentplane/testkit/kube";
import { createSandboxService, SANDBOX_SCHEMA } from "../../src/app.ts";
import type { SandboxDB } from "../../src/db/schema.ts";
import type { SandboxDeps } from "../../src/services/context.ts";
import { sandboxOutbox } from "../service-fixture.ts";
import { kubeDriver } from "./fixture.ts";

/** One sandbox-svc replica with the kubernetes driver, on a shared database. */
export async function replica(database: Database, fake: FakeKubeApiServer) {
  const bus = new MemoryBus();
  const driver = kubeDriver(fake, { startTimeoutMs: 2000 });
  const authorizer = { check: () => Promise.reject(new Error("verbs do not authorize; routes do")) };
  const service = await createSandboxService({
    database,
    bus,
    keys: await generateInternalKeys(),
    logger: silentLogger(),
    authorizer,
    config: { dataDir: "/nonexistent", idleCheckIntervalMs: 100 },
    driver,
  });
  const deps: SandboxDeps = {
    db: database.forSchema<SandboxDB>(SANDBOX_SCHEMA),
    database,
    bus,
    ...sandboxOutbox(database, bus),
    driver,
    authorizer,
    logger: silentLogger(),
    config: {},
  };
  return {
    service,
    deps,
    async close() {
      await service.close();
      await deps.outbox.stop();
      await bus.close();
    },
  };
}
