import { AUDIT_RECORDED, type AuditRecorded } from "@agentplane/contracts";
import { type Database, migrateToLatest, openDatabase } from "@agentplane/db";
import { createOutbox, MemoryBus, outboxMigrations } from "@agentplane/events";
import { BullMqBus } from "@agentplane/events/bullmq";
import { silentLogger } from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { SANDBOX_SCHEMA } from "../src/app.ts";
import { migrations } from "../src/db/migrations/index.ts";
import type { SandboxDB } from "../src/db/schema.ts";
import { recordStandaloneSandboxEvent, type SandboxDeps } from "../src/services/context.ts";

describe("sandbox audit records go through the service's outbox", () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase("pglite://memory");
    await migrateToLatest(database, SANDBOX_SCHEMA, { ...migrations, ...outboxMigrations("0002") });
  });
  afterAll(() => database.close());

  it("keeps a record while the bus is down, without failing, and another relay delivers it later", async () => {
    const downBus = new BullMqBus({ url: "redis://127.0.0.1:1", prefix: "test:sandbox-outbox" });
    const outbox = createOutbox({
      database,
      schema: SANDBOX_SCHEMA,
      bus: downBus,
      logger: silentLogger(),
      maxBackoffMs: 50,
    });
    const deps = {
      db: database.forSchema<SandboxDB>(SANDBOX_SCHEMA),
      database,
      bus: downBus,
      outbox,
      logger: silentLogger(),
    } as unknown as SandboxDeps;
    await recordStandaloneSandboxEvent(
      deps,
      { principal: { type: "user", id: "usr_1" }, orgId: "org_1" },
      {
        action: "sandbox.exec",
        projectId: "prj_1",
        targetType: "sandbox",
        targetId: "sbx_1",
        details: { command: "true", exitCode: 0 },
      },
    );
    expect(await outbox.pending()).toBe(1);
    await outbox.flush();
    expect(await outbox.pending()).toBe(1);
    await outbox.stop();
    await downBus.close();
    // A later process (or another replica) relays what was kept, once the failed attempt's retry
    // backoff (50 ms) has passed.
    const bus = new MemoryBus();
    const seen: AuditRecorded[] = [];
    await bus.subscribe<AuditRecorded>(AUDIT_RECORDED, async (e) => void seen.push(e.data));
    const relay = createOutbox({ database, schema: SANDBOX_SCHEMA, bus, logger: silentLogger() });
    await vi.waitFor(async () => expect(await relay.flush()).toBe(1), { timeout: 5000, interval: 20 });
    await bus.drain();
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ action: "sandbox.exec", orgId: "org_1", details: { exitCode: 0 } });
    expect(await relay.pending()).toBe(0);
    await bus.close();
  });
});
