import type { OrgRole } from "@agentplane/contracts";
import { TENANCY_SCHEMA } from "@agentplane/tenancy-svc";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { insertApiToken } from "../../tenancy-svc/src/services/api-tokens.ts";
import { call, type Harness, startHarness } from "./harness.ts";

describe("scoped API tokens through the gateway", () => {
  let h: Harness;
  let ownerId: string;
  let orgId: string;
  let db: Parameters<typeof insertApiToken>[0];

  beforeAll(async () => {
    h = await startHarness();
    db = h.database.kysely.withSchema(TENANCY_SCHEMA) as unknown as typeof db;
    const me = await call(h, "GET", "/v1/auth/me");
    ownerId = me.body.userId as string;
    orgId = (await call(h, "POST", "/v1/orgs", { body: { name: "Scopes" } })).body.id as string;
  });
  afterAll(() => h.close());

  /** A personal token (bound to no organization, as a device sign-in mints one) of the owner. */
  async function personal(role: OrgRole, scopes?: string[]) {
    return insertApiToken(db, { orgId: null, userId: ownerId, name: `cli ${role}`, role, scopes });
  }

  it("lists personal tokens with a token whose scopes name api-tokens:manage, within its role", async () => {
    const manager = await personal("member", ["api-tokens:manage"]);
    const ownerRole = await personal("owner");
    const listed = await call(h, "GET", "/v1/auth/api-tokens", { token: manager.token });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    const ids = (listed.body.items as { id: string; role: string }[]).map((t) => t.id);
    expect(ids).toContain(manager.row.id);
    // A member-role token of the owner does not see the owner's owner-role tokens.
    expect(ids).not.toContain(ownerRole.row.id);
    expect((listed.body.items as { role: string }[]).every((t) => ["member", "viewer"].includes(t.role))).toBe(true);
  });

  it("refuses a token scoped without api-tokens:manage with a problem naming it", async () => {
    const modelsOnly = await personal("owner", ["llm:invoke"]);
    const res = await call(h, "GET", "/v1/auth/api-tokens", { token: modelsOnly.token });
    expect(res.status).toBe(403);
    expect(res.headers.get("content-type")).toContain("application/problem+json");
    expect(res.body.detail).toContain("api-tokens:manage");
    // Routes that name no permission for scoped tokens stay closed to them.
    const me = await call(h, "GET", "/v1/auth/me", { token: (await personal("owner", ["api-tokens:manage"])).token });
    expect(me.status).toBe(403);
    expect(me.body.detail).toContain("an unrestricted token");
  });

  it("lists organizations with a token whose scopes name org:read", async () => {
    const reader = await call(h, "POST", `/v1/orgs/${orgId}/api-tokens`, {
      body: { name: "reader", scopes: ["org:read"] },
    });
    const listed = await call(h, "GET", "/v1/orgs", { token: reader.body.token as string });
    expect(listed.status, JSON.stringify(listed.body)).toBe(200);
    expect((listed.body.items as { id: string }[]).map((o) => o.id)).toEqual([orgId]);
    const models = await call(h, "POST", `/v1/orgs/${orgId}/api-tokens`, {
      body: { name: "models", scopes: ["llm:invoke"] },
    });
    const refused = await call(h, "GET", "/v1/orgs", { token: models.body.token as string });
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain("org:read");
  });

  it("an organization's scoped token still lists no personal tokens", async () => {
    const created = await call(h, "POST", `/v1/orgs/${orgId}/api-tokens`, {
      body: { name: "org scoped", scopes: ["api-tokens:manage"] },
    });
    expect(created.status).toBe(201);
    const res = await call(h, "GET", "/v1/auth/api-tokens", { token: created.body.token as string });
    expect(res.status).toBe(403);
    // It lists its organization's tokens, as its scope allows.
    expect((await call(h, "GET", `/v1/orgs/${orgId}/api-tokens`, { token: created.body.token as string })).status).toBe(
      200,
    );
  });
});
