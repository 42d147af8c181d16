import { AUDIT_RECORDED, type AuditRecorded } from "@agentplane/contracts";
import { type Database, migrateToLatest, openDatabase } from "@agentplane/db";
import { createOutbox, MemoryBus, outboxMigrations, withDomainEvents } from "@agentplane/events";
import { silentLogger } from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { SANDBOX_SCHEMA } from "../src/app.ts";
import { migrations } from "../src/db/migrations/index.ts";
import type { SandboxDB } from "../src/db/schema.ts";
import { recordSandboxEvent, type SandboxDeps } from "../src/services/context.ts";

const actor = { principal: { type: "user" as const, id: "usr_1" }, orgId: "org_1", requestId: "req-1" };
const record = { action: "sandbox_token.revoked", projectId: "prj_1", targetType: "sandboxToken", targetId: "sbt_1" };

describe("sandbox domain events are written in the transaction of the change", () => {
  let database: Database;
  beforeAll(async () => {
    database = await openDatabase("pglite://memory");
    await migrateToLatest(database, SANDBOX_SCHEMA, { ...migrations, ...outboxMigrations("0002") });
  }, 180_000);
  afterAll(() => database.close());

  function setup() {
    const bus = new MemoryBus();
    const outbox = createOutbox({ database, schema: SANDBOX_SCHEMA, bus, logger: silentLogger() });
    const deps = {
      db: database.forSchema<SandboxDB>(SANDBOX_SCHEMA),
      database,
      bus,
      outbox,
      logger: silentLogger(),
    } as unknown as SandboxDeps;
    return { bus, outbox, deps };
  }

  it("keeps no record of a change that rolled back", async () => {
    const { outbox, deps } = setup();
    const before = await outbox.pending();
    await expect(
      withDomainEvents(deps, async (trx) => {
        await recordSandboxEvent(deps, trx, actor, record);
        throw new Error("the change failed after its record was written");
      }),
    ).rejects.toThrow(/change failed/);
    expect(await outbox.pending()).toBe(before);
    await outbox.stop();
  });

  it("commits the record with the change and relays it right after the commit", async () => {
    const { bus, outbox, deps } = setup();
    const seen: AuditRecorded[] = [];
    await bus.subscribe<AuditRecorded>(AUDIT_RECORDED, async (e) => void seen.push(e.data));
    outbox.start();
    await withDomainEvents(deps, async (trx) => {
      await recordSandboxEvent(deps, trx, actor, record);
    });
    await vi.waitFor(async () => {
      await bus.drain();
      expect(seen).toHaveLength(1);
    });
    expect(seen[0]).toMatchObject({
      action: "sandbox_token.revoked",
      source: "domain",
      orgId: "org_1",
      projectId: "prj_1",
      requestId: "req-1",
      targets: { sandboxTokenId: "sbt_1" },
    });
    await outbox.stop();
  });

  it("fails the change when its record cannot be written", async () => {
    const { outbox, deps } = setup();
    const broken = { ...deps, outbox: createOutbox({ database, schema: "no_such_schema", bus: deps.bus }) };
    await expect(
      withDomainEvents(broken, async (trx) => {
        await trx.deleteFrom("sandboxes").where("id", "=", "sbx_none").execute();
        await recordSandboxEvent(broken, trx, actor, record);
      }),
    ).rejects.toThrow();
    await outbox.stop();
  });
});
