// Each sandbox verb writes its audit record in the transaction of its change: when the record
// cannot be written, the change does not stay (a token is not created, a start is undone) and the
// request fails instead of succeeding unrecorded.
import { AUDIT_RECORDED, type AuditRecorded, CreateSandboxRequest } from "@agentplane/contracts";
import { type Database, migrateToLatest, openDatabase } from "@agentplane/db";
import { createOutbox, MemoryBus, type Outbox, outboxMigrations } from "@agentplane/events";
import { silentLogger } from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { SANDBOX_SCHEMA } from "../src/app.ts";
import { migrations } from "../src/db/migrations/index.ts";
import type { SandboxDB } from "../src/db/schema.ts";
import type { LocalDriver } from "../src/driver/local/local-driver.ts";
import type { SandboxDeps } from "../src/services/context.ts";
import { createSandbox } from "../src/services/create.ts";
import { execInSandbox } from "../src/services/exec.ts";
import { getSandboxRow, startSandbox } from "../src/services/sandboxes.ts";
import { stopSandbox } from "../src/services/stop-delete.ts";
import { createSandboxToken, listSandboxTokens } from "../src/services/tokens.ts";
import { newDriver } from "./helpers.ts";

const PROJECT = "prj_events";
const actor = { principal: { type: "user" as const, id: "usr_1" }, orgId: "org_1", requestId: "req-1" };

describe("sandbox verbs write their audit records in the transaction of the change", () => {
  let database: Database;
  let driver: LocalDriver;
  let bus: MemoryBus;
  let outbox: Outbox;
  let deps: SandboxDeps;
  let broken: SandboxDeps;
  const seen: AuditRecorded[] = [];

  beforeAll(async () => {
    database = await openDatabase("pglite://memory");
    await migrateToLatest(database, SANDBOX_SCHEMA, { ...migrations, ...outboxMigrations("0002") });
    driver = newDriver({ isolation: "none" });
    bus = new MemoryBus();
    await bus.subscribe<AuditRecorded>(AUDIT_RECORDED, async (e) => void seen.push(e.data));
    outbox = createOutbox({ database, schema: SANDBOX_SCHEMA, bus, logger: silentLogger() });
    outbox.start();
    deps = {
      db: database.forSchema<SandboxDB>(SANDBOX_SCHEMA),
      database,
      bus,
      outbox,
      driver,
      logger: silentLogger(),
      config: {},
    } as unknown as SandboxDeps;
    // An outbox whose table does not exist: every record written to it fails.
    broken = { ...deps, outbox: createOutbox({ database, schema: "no_such_schema", bus }) };
  }, 180_000);
  afterAll(async () => {
    await outbox.stop();
    await driver.close();
    await database.close();
  });

  const newSandbox = (name: string) =>
    createSandbox(deps, actor, {
      projectId: PROJECT,
      ...CreateSandboxRequest.parse({ name, command: ["node", "-e", "setInterval(() => {}, 1000)"] }),
    });

  it("creates no sandbox token when its record cannot be written", async () => {
    const sandbox = await newSandbox("tokens");
    await expect(createSandboxToken(broken, actor, { name: "unrecorded", sandbox })).rejects.toThrow();
    expect((await listSandboxTokens(deps, PROJECT)).map((t) => t.name)).not.toContain("unrecorded");

    const { row } = await createSandboxToken(deps, actor, { name: "recorded", sandbox });
    await vi.waitFor(() =>
      expect(seen.some((r) => r.targetId === row.id && r.action === "sandbox_token.created")).toBe(true),
    );
  });

  it("undoes a start whose record cannot be written: the process stops and the sandbox is failed", async () => {
    const sandbox = await newSandbox("start");
    await expect(startSandbox(broken, actor, { projectId: PROJECT, sandboxId: sandbox.id })).rejects.toThrow();
    const after = await getSandboxRow(deps, PROJECT, sandbox.id);
    expect(after.state).toBe("failed");
    expect((await driver.status(sandbox.id)).phase).not.toBe("running");
    expect(seen.some((r) => r.targetId === sandbox.id && r.action === "sandbox.started")).toBe(false);

    // Started again with a working outbox: running, and recorded.
    expect((await startSandbox(deps, actor, { projectId: PROJECT, sandboxId: sandbox.id })).state).toBe("running");
    await vi.waitFor(() =>
      expect(seen.some((r) => r.targetId === sandbox.id && r.action === "sandbox.started")).toBe(true),
    );

    // A command whose record cannot be written fails the request rather than passing unrecorded.
    await expect(
      execInSandbox(broken, actor, {
        command: ["true"],
        timeoutMs: 10_000,
        sandbox: await getSandboxRow(deps, PROJECT, sandbox.id),
      }),
    ).rejects.toThrow();
    const ran = await execInSandbox(deps, actor, {
      command: ["true"],
      timeoutMs: 10_000,
      sandbox: await getSandboxRow(deps, PROJECT, sandbox.id),
    });
    expect(ran.exitCode).toBe(0);
    await vi.waitFor(() =>
      expect(seen.filter((r) => r.targetId === sandbox.id && r.action === "sandbox.exec")).toHaveLength(1),
    );
    await stopSandbox(deps, actor, { projectId: PROJECT, sandboxId: sandbox.id });
  }, 60_000);
});
