import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SERVICE_NAMES } from "@agentplane/contracts";
import { type Database, openDatabase } from "@agentplane/db";
import { MemoryBus } from "@agentplane/events";
import { silentLogger } from "@agentplane/service-kit";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { assemblePlatform, type Platform } from "../src/assemble.ts";
import { AllInOneEnvSchema } from "../src/config.ts";
import {
  expectCompleteAudit,
  expectedRecordCount,
  type StoredRequestRecord,
  type WalkedCall,
  walkEveryRoute,
} from "./audit-walk.ts";
import { fuzzRoutes } from "./fuzz.ts";

export async function storedRequestRecords(database: Database): Promise<StoredRequestRecord[]> {
  type Trail = { audit_records: { request_id: string; org_id: string | null; status: number | null; source: string } };
  const rows = await database
    .forSchema<Trail>("audit")
    .selectFrom("audit_records")
    .select(["request_id", "org_id", "status"])
    .where("source", "=", "request")
    .execute();
  return rows.map((r) => ({ requestId: r.request_id, orgId: r.org_id, status: r.status }));
}

async function drainAudit(platform: Platform): Promise<void> {
  await (platform.services.audit as { drain?: () => Promise<void> } | undefined)?.drain?.();
}

describe("audit completeness, all-in-one: every contract route walked once per caller", () => {
  const dataDir = mkdtempSync(join(tmpdir(), "agentplane-walk-"));
  const token = `owner_${randomBytes(24).toString("hex")}`;
  let database: Database;
  let platform: Platform;

  beforeAll(async () => {
    database = await openDatabase("pglite://memory");
    const env = AllInOneEnvSchema.parse({
      PORT: "0",
      HOST: "127.0.0.1",
      AGENTPLANE_DATA_DIR: dataDir,
      AGENTPLANE_BOOTSTRAP_TOKEN: token,
      AGENT_RUNTIME: "off",
      SANDBOX_LOCAL_ISOLATION: "none",
      RATE_LIMIT_PER_MINUTE: "100000",
    });
    platform = await assemblePlatform({ env, dataDir, database, bus: new MemoryBus(), logger: silentLogger() });
  }, 180_000);
  afterAll(async () => {
    await platform?.close();
    await database?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function expectAudited(calls: WalkedCall[]): Promise<void> {
    const expected = expectedRecordCount(calls);
    const ids = new Set(calls.map((c) => c.requestId));
    const stored = async () => (await storedRequestRecords(database)).filter((r) => ids.has(r.requestId));
    await vi.waitFor(
      async () => {
        await drainAudit(platform);
        expect((await stored()).length).toBeGreaterThanOrEqual(expected);
      },
      { timeout: 60_000, interval: 100 },
    );
    expectCompleteAudit(calls, await stored());
  }

  it("stores one request record per mutating call and per 401/403, naming its organization", async () => {
    await expectAudited(await walkEveryRoute(platform.url, token, new Set(SERVICE_NAMES)));
  }, 300_000);

  it("answers fuzzed paths, queries and bodies below 500 and loses no audit record", async () => {
    await expectAudited(await fuzzRoutes(platform.url, token, new Set(SERVICE_NAMES), { seed: 9, count: 300 }));
  }, 300_000);

  it("refuses a sandbox token named with a lone surrogate with a 400 naming the field", async () => {
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const org = await fetch(`${platform.url}/v1/orgs`, { method: "POST", headers, body: '{"name":"Names"}' });
    const orgId = ((await org.json()) as { id: string }).id;
    const project = await fetch(`${platform.url}/v1/orgs/${orgId}/projects`, {
      method: "POST",
      headers,
      body: '{"name":"names"}',
    });
    const projectId = ((await project.json()) as { id: string }).id;
    const res = await fetch(`${platform.url}/v1/projects/${projectId}/sandbox-tokens`, {
      method: "POST",
      headers,
      body: '{"sandboxId":"sbx_x","name":"bad \\udc00"}',
    });
    expect(res.status).toBe(400);
    const problem = (await res.json()) as { errors: { pointer: string }[] };
    expect(problem.errors[0]?.pointer).toBe("/body/name");
  });

  it("serves records of no organization to the installation owner only", async () => {
    const unknown = await fetch(`${platform.url}/v1/auth/me`, { headers: { authorization: "Bearer apl_nope_nope" } });
    expect(unknown.status).toBe(401);
    const requestId = unknown.headers.get("x-request-id");
    await vi.waitFor(
      async () => {
        await drainAudit(platform);
        const page = await fetch(`${platform.url}/v1/installation/audit-trail?limit=200`, {
          headers: { authorization: `Bearer ${token}` },
        });
        expect(page.status).toBe(200);
        const body = (await page.json()) as { items: { requestId?: string; orgId?: string }[] };
        expect(body.items.some((item) => item.requestId === requestId && item.orgId === undefined)).toBe(true);
      },
      { timeout: 30_000, interval: 100 },
    );

    // An owner of another organization (not the installation's owner) is refused.
    const org = await fetch(`${platform.url}/v1/orgs`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Other" }),
    });
    const orgId = ((await org.json()) as { id: string }).id;
    const created = await fetch(`${platform.url}/v1/orgs/${orgId}/api-tokens`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "admin", role: "admin" }),
    });
    const admin = ((await created.json()) as { token: string }).token;
    const refused = await fetch(`${platform.url}/v1/installation/audit-trail`, {
      headers: { authorization: `Bearer ${admin}` },
    });
    expect(refused.status).toBe(403);
  });
});
