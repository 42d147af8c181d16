import { type Database, migrateToLatest, openDatabase } from "@agentplane/db";
import { MemoryBus, outboxMigrations } from "@agentplane/events";
import { ProblemError } from "@agentplane/problem-details";
import { type Caller, generateInternalKeys, httpFetch, ServiceClient, silentLogger } from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SANDBOX_SCHEMA } from "../src/app.ts";
import { migrations } from "../src/db/migrations/index.ts";
import type { SandboxDB } from "../src/db/schema.ts";
import type { SandboxDeps } from "../src/services/context.ts";
import { createSandbox } from "../src/services/create.ts";
import { admissionContext, execContext } from "../src/services/policy.ts";
import { listSandboxes } from "../src/services/sandboxes.ts";
import { newDriver } from "./helpers.ts";
import { sandboxOutbox } from "./service-fixture.ts";

describe("policy checks fail closed", () => {
  let database: Database;
  let deps: SandboxDeps;
  const actor: Caller = { principal: { type: "user", id: "usr_1" }, orgId: "org_1" };

  beforeAll(async () => {
    database = await openDatabase("pglite://memory");
    // With the outbox's tables, in the order the service applies them (0002 between 0001 and 0003).
    await migrateToLatest(database, SANDBOX_SCHEMA, { ...migrations, ...outboxMigrations("0002") });
    const keys = await generateInternalKeys();
    const bus = new MemoryBus();
    deps = {
      db: database.forSchema<SandboxDB>(SANDBOX_SCHEMA),
      database,
      bus,
      ...sandboxOutbox(database, bus),
      driver: newDriver(),
      authorizer: { check: () => Promise.reject(new Error("verbs do not authorize")) },
      logger: silentLogger(),
      config: {},
      // Nothing listens on port 1: governance is unreachable.
      governance: new ServiceClient("governance", httpFetch("http://127.0.0.1:1"), keys),
    };
  });
  afterAll(async () => {
    await deps.outbox.stop();
    await database.close();
  });

  it("answers 503 with Retry-After when governance cannot be asked, and writes nothing", async () => {
    const err = await createSandbox(deps, actor, { projectId: "prj_1", name: "box", labels: {}, start: false }).catch(
      (e) => e,
    );
    expect(err).toBeInstanceOf(ProblemError);
    expect(err).toMatchObject({ status: 503, headers: { "retry-after": "2" } });
    expect((await listSandboxes(deps, "prj_1", { limit: 10 })).items).toEqual([]);
  });

  it("sends env names but never their values, and exec argv as it runs", () => {
    const context = admissionContext(
      {
        image: "default",
        command: null,
        env: { API_TOKEN: "secret-value", PATH_EXTRA: "/opt" },
        resources: { cpuMillicores: 500, memoryMiB: 256 },
        ports: [{ port: 8080, visibility: "public" }],
        idleTimeoutSeconds: 0,
      },
      { team: "ml" },
    );
    expect(context).toEqual({
      image: "default",
      resources: { cpu: 0.5, memoryMb: 256 },
      ports: [{ port: 8080, visibility: "public" }],
      labels: { team: "ml" },
      envNames: ["API_TOKEN", "PATH_EXTRA"],
    });
    expect(JSON.stringify(context)).not.toContain("secret-value");
    expect(execContext(["/usr/bin/git", "status"], true)).toEqual({
      argv: ["/usr/bin/git", "status"],
      command: "/usr/bin/git status",
      tty: true,
    });
  });
});
