import { internalQuerySandboxesRoute, type QuerySandboxesResponse } from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import {
  generateInternalKeys,
  inProcessFetch,
  ServiceClient,
  servicePrincipal,
  silentLogger,
} from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createSandboxService, SANDBOX_SCHEMA, type SandboxService } from "../src/app.ts";
import type { SandboxDB } from "../src/db/schema.ts";
import type { SandboxDeps } from "../src/services/context.ts";
import { createSandbox } from "../src/services/create.ts";
import { tempDataDir } from "./helpers.ts";
import { sandboxOutbox } from "./service-fixture.ts";

describe("internal sandbox query (governance reads sandboxes of an organization)", () => {
  let database: Database;
  let service: SandboxService;
  let deps: SandboxDeps;
  let client: ServiceClient;
  const ids: Record<string, string> = {};

  beforeAll(async () => {
    database = await openDatabase("pglite://memory");
    const keys = await generateInternalKeys();
    const bus = new MemoryBus();
    service = await createSandboxService({
      database,
      bus,
      keys,
      logger: silentLogger(),
      authorizer: { check: () => Promise.reject(new Error("internal routes do not ask tenancy")) },
      config: { dataDir: tempDataDir() },
    });
    deps = {
      db: database.forSchema<SandboxDB>(SANDBOX_SCHEMA),
      database,
      bus,
      ...sandboxOutbox(database, bus),
      driver: service.driver,
      authorizer: { check: () => Promise.reject(new Error("verbs do not authorize")) },
      logger: silentLogger(),
      config: {},
    };
    client = new ServiceClient("sandbox", inProcessFetch(service), keys);
    const inOrg = (orgId: string) => ({ principal: { type: "user" as const, id: "usr_test" }, orgId });
    ids.a1 = (
      await createSandbox(deps, inOrg("org_a"), {
        projectId: "prj_a1",
        name: "web",
        labels: { team: "ml" },
        start: false,
        env: { SECRET_TOKEN: "s3cr3t-value" },
        ports: [
          { port: 8080, visibility: "public" },
          { port: 9000, visibility: "private" },
        ],
      })
    ).id;
    ids.a2 = (
      await createSandbox(deps, inOrg("org_a"), { projectId: "prj_a2", name: "db", labels: {}, start: false })
    ).id;
    ids.b = (
      await createSandbox(deps, inOrg("org_b"), { projectId: "prj_b", name: "other", labels: {}, start: false })
    ).id;
  });
  afterAll(async () => {
    await service.close();
    await deps.outbox.stop();
    await database.close();
  });

  const query = (body: unknown) =>
    client.request<QuerySandboxesResponse>("POST", internalQuerySandboxesRoute.path, {
      principal: servicePrincipal("governance"),
      body,
    });

  it("lists an organization's sandboxes with what policies decide on, never env values", async () => {
    const { items } = await query({ orgId: "org_a" });
    expect(items.map((i) => i.id).sort()).toEqual([ids.a1, ids.a2].sort());
    const web = items.find((i) => i.id === ids.a1);
    expect(web).toMatchObject({
      orgId: "org_a",
      projectId: "prj_a1",
      name: "web",
      image: "default",
      labels: { team: "ml" },
      ports: [
        { port: 8080, visibility: "public" },
        { port: 9000, visibility: "private" },
      ],
      status: "pending",
    });
    expect(new Date(web?.createdAt ?? "").getTime()).toBeGreaterThan(0);
    expect(JSON.stringify(items)).not.toContain("s3cr3t-value");
    expect(JSON.stringify(items)).not.toContain("SECRET_TOKEN");
  });

  it("narrows to a project or one sandbox, and never crosses organizations", async () => {
    expect((await query({ orgId: "org_a", projectId: "prj_a2" })).items.map((i) => i.id)).toEqual([ids.a2]);
    expect((await query({ orgId: "org_a", sandboxId: ids.a1 })).items.map((i) => i.id)).toEqual([ids.a1]);
    expect((await query({ orgId: "org_a", sandboxId: ids.b })).items).toEqual([]);
    expect((await query({ orgId: "org_b" })).items.map((i) => i.id)).toEqual([ids.b]);
  });

  it("answers 400 naming the field for a bad body and 403 to anything but a service", async () => {
    await expect(query({ projectId: "prj_a1" })).rejects.toMatchObject({ status: 400 });
    await expect(
      client.request("POST", internalQuerySandboxesRoute.path, {
        principal: { type: "user", id: "usr_1" },
        body: { orgId: "org_a" },
      }),
    ).rejects.toMatchObject({ status: 403 });
    const res = await service.fetch(
      new Request(`http://sandbox.internal${internalQuerySandboxesRoute.path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ orgId: "org_a" }),
      }),
    );
    expect(res.status).toBe(401);
  });
});
