import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Database, openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { silentLogger } from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { assemblePlatform, type Platform } from "../src/assemble.ts";
import { AllInOneEnvSchema } from "../src/config.ts";
import { provisionRuntimeIdentity } from "../src/runtime.ts";

// The launcher gives the local agent runtime a project and a token of its own, acting for the
// organization's owner: the audit trail names the owner as a person would see them, not by an id.

const OWNER = `owner-${"r".repeat(40)}`;

interface AuditItem {
  action: string;
  principal: { type: string; id: string; displayName?: string };
}

describe("the agent runtime's identity, provisioned by the launcher", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "runtime-identity-"));
  let database: Database;
  let platform: Platform | undefined;

  beforeAll(async () => {
    database = await openDatabase(`pglite://${join(dataDir, "pg")}`);
    const rawEnv = {
      PORT: "0",
      HOST: "127.0.0.1",
      AGENTPLANE_DATA_DIR: dataDir,
      AGENT_RUNTIME: "off",
      SANDBOX_LOCAL_ISOLATION: "none",
      AGENTPLANE_BOOTSTRAP_TOKEN: OWNER,
    };
    const env = AllInOneEnvSchema.parse(rawEnv);
    platform = await assemblePlatform({ env, dataDir, database, bus: new MemoryBus(), logger: silentLogger() });
    await provisionRuntimeIdentity({ platform, env, rawEnv, dataDir });
  }, 120_000);

  afterAll(async () => {
    await platform?.close();
    await database?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it("records the project and the token it creates under the owner's name", async () => {
    const get = async (path: string) =>
      (await fetch(`${platform?.url}${path}`, { headers: { authorization: `Bearer ${OWNER}` } })).json();
    const me = (await get("/v1/auth/me")) as { organizations: { id: string }[]; userId: string };
    const orgId = me.organizations[0]?.id;
    const members = (await get(`/v1/orgs/${orgId}/members`)) as { items: { userId: string; displayName: string }[] };
    const ownerName = members.items.find((m) => m.userId === me.userId)?.displayName;
    expect(ownerName).toBeTruthy();

    let items: AuditItem[] = [];
    const end = Date.now() + 20_000;
    while (Date.now() < end) {
      items = ((await get(`/v1/orgs/${orgId}/audit-trail?limit=50`)) as { items: AuditItem[] }).items;
      if (items.some((i) => i.action === "api_token.created")) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const created = items.filter((i) => i.action === "api_token.created" || i.action === "project.created");
    expect(created.map((i) => i.action).sort()).toEqual(["api_token.created", "project.created"]);
    for (const item of created) {
      expect(item.principal).toEqual({ type: "user", id: me.userId, displayName: ownerName });
    }
  });
});
